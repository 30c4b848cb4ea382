/**
 * The API keys the traffic port accepts, with each key's tenant and each
 * tenant's quotas, parsed from the file `auth.apiKeysFile` names (YAML or
 * JSON; the format is in docs/shared-state.md, "API keys and quotas"):
 *
 *   tenants:
 *     team-a: { requestsPerSecond: 50, burst: 100, maxConcurrent: 20, priority: high }
 *     batch: { priority: low }
 *   keys:
 *     - sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *       tenant: team-a
 *     - key: sk-local-test
 *       tenant: batch
 *
 * Rules that follow from a file that holds secrets:
 * - Only SHA-256 digests are kept: a plaintext `key` is hashed at load and
 *   dropped, so neither memory dumps nor `/debug` output can show it.
 * - No error message quotes the file: not a value, and not the YAML parser's
 *   own messages either, which excerpt the offending line. Positions, field
 *   paths and tenant names only.
 * - The presented key is compared in constant time: its digest finds a
 *   bucket by a short digest prefix (learning which prefixes exist tells an
 *   attacker nothing about any key, since SHA-256 has no usable preimages),
 *   and `timingSafeEqual` over the whole 32-byte digests decides.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { PRIORITIES, type Priority } from '../scheduling/priority.ts';
import type { TenantLimits } from '../state/quota.ts';

/** A problem with the keys file; the message never quotes the file's content. */
export class ApiKeysFileError extends Error {
  override readonly name = 'ApiKeysFileError';
}

/** What an `Authorization` header proves. */
export type Authentication =
  | {
      readonly kind: 'tenant';
      readonly tenant: string;
      readonly limits: TenantLimits;
      /** The tenant's priority class, when the file gives one. */
      readonly priority?: Priority;
    }
  | { readonly kind: 'missing' }
  | { readonly kind: 'invalid' };

const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const tenantName = z.string().regex(TENANT_NAME, 'tenant names are 1-64 letters, digits and . _ - (they become metric labels and Redis keys)');

const limits = z
  .object({
    requestsPerSecond: z.number().positive().max(1_000_000).optional(),
    burst: z.number().int().min(1).max(1_000_000).optional(),
    maxConcurrent: z.number().int().min(1).max(1_000_000).optional(),
    // The priority its requests run at unless a trusted proxy's priority header says otherwise.
    priority: z.enum(PRIORITIES).optional(),
  })
  .strict()
  .refine((l) => l.burst === undefined || l.requestsPerSecond !== undefined, { message: 'burst needs requestsPerSecond', path: ['burst'] });

const keyEntry = z
  .object({
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits (the SHA-256 of the key)').optional(),
    // RFC 6750 b64token is printable ASCII without spaces; anything else could never arrive in a Bearer header.
    key: z.string().regex(/^[\x21-\x7e]{1,4096}$/, 'must be printable ASCII without spaces (it is sent as Authorization: Bearer <key>)').optional(),
    tenant: tenantName,
  })
  .strict()
  .refine((k) => (k.sha256 === undefined) !== (k.key === undefined), { message: 'give exactly one of sha256 and key' });

const keysFile = z
  .object({
    tenants: z.record(tenantName, limits.nullable().transform((l) => l ?? {})),
    keys: z.array(keyEntry),
  })
  .strict();

interface KeyEntry {
  readonly digest: Buffer;
  readonly tenant: string;
}

// RFC 7235: the scheme is case-insensitive and followed by one or more spaces.
const BEARER = /^bearer +(\S+) *$/i;
/** Bytes of the digest that pick a bucket. */
const BUCKET_BYTES = 4;

/** A parsed keys file: digests by bucket, and the tenants' limits. Immutable. */
export class ApiKeySet {
  readonly #buckets = new Map<string, KeyEntry[]>();
  readonly #tenants: ReadonlyMap<string, TenantLimits>;
  readonly #priorities: ReadonlyMap<string, Priority>;
  /** Distinct keys. */
  readonly size: number;

  /** `priorities`: each tenant's priority class, for those the file gives one. */
  constructor(entries: readonly KeyEntry[], tenants: ReadonlyMap<string, TenantLimits>, priorities: ReadonlyMap<string, Priority> = new Map()) {
    this.#tenants = tenants;
    this.#priorities = priorities;
    for (const entry of entries) {
      const bucket = entry.digest.toString('hex', 0, BUCKET_BYTES);
      const list = this.#buckets.get(bucket);
      if (list === undefined) this.#buckets.set(bucket, [entry]);
      else list.push(entry);
    }
    this.size = entries.length;
  }

  /** Tenant names with their limits. */
  get tenants(): ReadonlyMap<string, TenantLimits> {
    return this.#tenants;
  }

  /** Who presents `authorization` (the header's value): a tenant, nobody (`missing`), or a wrong key or scheme (`invalid`). */
  authenticate(authorization: string | undefined): Authentication {
    if (authorization === undefined || authorization === '') return { kind: 'missing' };
    const match = BEARER.exec(authorization);
    if (match === null) return { kind: 'invalid' };
    const digest = sha256(match[1] as string);
    let found: KeyEntry | undefined;
    for (const entry of this.#buckets.get(digest.toString('hex', 0, BUCKET_BYTES)) ?? []) {
      if (timingSafeEqual(entry.digest, digest)) found = entry;
    }
    if (found === undefined) return { kind: 'invalid' };
    const limits = this.#tenants.get(found.tenant) ?? {};
    const priority = this.#priorities.get(found.tenant);
    return priority === undefined ? { kind: 'tenant', tenant: found.tenant, limits } : { kind: 'tenant', tenant: found.tenant, limits, priority };
  }
}

/**
 * Parses the keys file's text (YAML or JSON).
 * @throws ApiKeysFileError saying what is wrong and where, never quoting the content.
 */
export function parseApiKeys(text: string): ApiKeySet {
  const document = parseDocument(text, { uniqueKeys: true });
  const yamlError = document.errors[0];
  if (yamlError !== undefined) {
    const at = yamlError.linePos?.[0];
    throw new ApiKeysFileError(`not valid YAML or JSON (${yamlError.code}${at === undefined ? '' : ` at line ${at.line}, column ${at.col}`})`);
  }
  const parsed = keysFile.safeParse(document.toJS());
  if (!parsed.success) throw new ApiKeysFileError(describeIssue(parsed.error.issues[0]));
  const tenants = new Map<string, TenantLimits>();
  const priorities = new Map<string, Priority>();
  for (const [name, { priority, ...quota }] of Object.entries(parsed.data.tenants)) {
    tenants.set(name, quota);
    if (priority !== undefined) priorities.set(name, priority);
  }
  const byDigest = new Map<string, KeyEntry>();
  for (const [index, entry] of parsed.data.keys.entries()) {
    // Not quoted: a key pasted into the wrong field would otherwise reach the log.
    if (!tenants.has(entry.tenant)) throw new ApiKeysFileError(`keys[${index}].tenant: names no tenant listed under tenants`);
    const digest = entry.sha256 === undefined ? sha256(entry.key as string) : Buffer.from(entry.sha256, 'hex');
    const hex = digest.toString('hex');
    const earlier = byDigest.get(hex);
    if (earlier !== undefined && earlier.tenant !== entry.tenant) throw new ApiKeysFileError(`keys[${index}]: the same key is listed for two tenants`);
    byDigest.set(hex, { digest, tenant: entry.tenant });
  }
  return new ApiKeySet([...byDigest.values()], tenants, priorities);
}

/** Fields each level of the file knows, for an unknown one (whose name is not quoted: it could be a key). */
const FIELDS = { root: 'tenants, keys', tenants: 'requestsPerSecond, burst, maxConcurrent, priority', keys: 'sha256 or key, and tenant' };

/**
 * Where and what, without quoting the content: path segments are the
 * format's own field names, indexes, and valid tenant names (they are
 * metric labels anyway); an invalid tenant name or an unknown field is
 * described, not quoted.
 */
function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'the file: not valid';
  const invalidName = issue.code === 'invalid_key';
  const path = issue.path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `.${invalidName && i === issue.path.length - 1 ? '<name>' : String(part)}`))
    .join('')
    .replace(/^\./, '');
  let message = issue.message;
  if (invalidName) message = issue.issues[0]?.message ?? 'not a valid name';
  if (issue.code === 'unrecognized_keys') {
    const level = issue.path[0] === 'tenants' || issue.path[0] === 'keys' ? issue.path[0] : 'root';
    message = `unknown field (this level takes ${FIELDS[level]})`;
  }
  return `${path === '' ? 'the file' : path}: ${message}`;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

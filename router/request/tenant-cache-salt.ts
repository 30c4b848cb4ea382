/**
 * vLLM's `cache_salt` per tenant (`auth.tenantCacheSalt`, on by default with
 * API keys). vLLM shares prefix-cache blocks between every request with the
 * same salt, and a cache hit answers measurably sooner: without a salt, one
 * tenant can time its own requests to learn which prefixes another tenant
 * sent (a system prompt, a document). With the salt set from the tenant,
 * tenants never share blocks; a client's own `cache_salt` still partitions
 * its tenant's cache further, combined with the tenant's.
 *
 * This is the one place the router changes a request body (DESIGN.md says
 * bytes in, same bytes out): a bounded rewrite that appends one member
 * before the closing `}` of a body the scanner already validated as a JSON
 * object. A `cache_salt` the client sent stays in place and the appended one
 * follows it: JSON parsers keep the last duplicate member (Python's `json`,
 * which vLLM's server uses, and `JSON.parse`).
 */
import { createHash } from 'node:crypto';

/** Routes whose bodies vLLM reads `cache_salt` from. */
export const SALTED_ROUTES: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/completions']);

/** Domain label, so the salt is good for nothing else. */
const LABEL = 'switchyard cache salt v1\0';

/**
 * The salt for `tenant`'s requests, combined with the client's own
 * `cache_salt` (undefined: none): 43 base64url characters, the same on every
 * replica and install (engines of several installs may serve one tenant).
 * Length-framed, so no (tenant, client salt) pair collides with another
 * (the scanner reports an empty client salt as none; vLLM refuses it anyway).
 */
export function tenantCacheSalt(tenant: string, clientSalt: string | undefined): string {
  const hash = createHash('sha256').update(LABEL);
  for (const field of [tenant, clientSalt ?? '']) {
    const bytes = Buffer.from(field, 'utf8');
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(bytes.length);
    hash.update(length).update(bytes);
  }
  return hash.digest('base64url');
}

/**
 * `body` with `"cache_salt":"<salt>"` appended as the object's last member.
 * `body` must be a JSON object (the body scanner has checked it); `salt` is
 * base64url, so it needs no escaping. Returns a new buffer; `body` is kept.
 * @throws Error when `body` does not end with `}` (whitespace aside): a
 *   caller bug, since only validated JSON objects reach here.
 */
export function withCacheSalt(body: Buffer, salt: string): Buffer {
  let end = body.length - 1;
  while (end >= 0 && isJsonSpace(body[end] as number)) end--;
  if (end < 0 || body[end] !== 0x7d) throw new Error('withCacheSalt: the body is not a JSON object');
  let before = end - 1;
  while (before >= 0 && isJsonSpace(body[before] as number)) before--;
  const empty = body[before] === 0x7b;
  const member = Buffer.from(`${empty ? '' : ','}"cache_salt":"${salt}"`, 'latin1');
  return Buffer.concat([body.subarray(0, end), member, body.subarray(end)]);
}

/** JSON's insignificant whitespace (RFC 8259 §2). */
function isJsonSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

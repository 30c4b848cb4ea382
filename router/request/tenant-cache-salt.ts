/**
 * vLLM's `cache_salt` per tenant (`auth.tenantCacheSalt`, on by default with
 * API keys). vLLM shares prefix-cache blocks between every request with the
 * same salt, and a cache hit answers measurably sooner: without a salt, one
 * tenant can time its own requests to learn which prefixes another tenant
 * sent (a system prompt, a document). With the salt set from the tenant,
 * tenants never share blocks; a client's own `cache_salt` still partitions
 * its tenant's cache further, combined with the tenant's.
 *
 * One of the router's two rewrites of a request body (body-member.ts): a
 * `cache_salt` the client sent stays in place and the appended one follows
 * it, and the last duplicate member is the one parsers keep.
 */
import { createHash } from 'node:crypto';
import { withLastMember } from './body-member.ts';

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
 * `body` with `"cache_salt":"<salt>"` appended as the object's last member
 * (body-member.ts). `salt` is base64url, so it needs no escaping.
 */
export function withCacheSalt(body: Buffer, salt: string): Buffer {
  return withLastMember(body, 'cache_salt', `"${salt}"`);
}

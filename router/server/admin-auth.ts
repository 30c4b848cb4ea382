/**
 * The admin port's optional bearer token. `/debug/endpoints` shows pod IPs,
 * namespaces, label selectors, Kubernetes API errors and the model
 * inventory, and `/metrics` much of the same; on a port bound to 0.0.0.0 by
 * default, anyone in the cluster network could read them. With
 * `adminTokenFile` set, every admin path except the probes needs
 * `Authorization: Bearer <token>`; without it the port stays open, so a
 * default install keeps working with Prometheus and the kubelet.
 *
 * Rules that follow:
 * - `/livez` and `/readyz` never need the token, whatever the method: the
 *   kubelet sends no credentials, and a probe answered 401 restarts the pod.
 * - Tokens are compared as SHA-256 digests with `timingSafeEqual`: equal
 *   length by construction, and the time taken says nothing about how much
 *   of the token matched. Only the digest of the expected token is kept.
 * - The check runs in the admin port's worker thread, before a request is
 *   handed to the main thread, so unauthenticated requests never cost the
 *   main event loop anything.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { renderError, type ErrorAnswer } from '../errors/error-answer.ts';
import { SwitchyardError } from '../errors/errors.ts';

/** The realm named in `WWW-Authenticate` (RFC 6750 section 3). */
export const ADMIN_REALM = 'switchyard-admin';

/** Admin paths that never need the token (Kubernetes probes carry none). */
export const OPEN_ADMIN_PATHS: ReadonlySet<string> = new Set(['/livez', '/readyz']);

/** SHA-256 digest (32 bytes) of a token, the only form the check keeps. */
export function adminTokenDigest(token: string): Uint8Array {
  return createHash('sha256').update(token, 'utf8').digest();
}

// RFC 7235: the scheme is case-insensitive and followed by one or more spaces; RFC 6750 b64token has no spaces.
const BEARER = /^bearer +(\S+) *$/i;

/**
 * True when an `Authorization` header value carries the token whose digest
 * is `expected` (from {@link adminTokenDigest}). Missing header, another
 * scheme or a wrong token: false. Takes the same time for any wrong token.
 */
export function adminAuthorized(authorization: string | undefined, expected: Uint8Array): boolean {
  const match = authorization === undefined ? null : BEARER.exec(authorization);
  if (match === null) return false;
  return timingSafeEqual(adminTokenDigest(match[1] as string), expected);
}

/** Whether a request for `path` (no query) must carry the token, given one is configured. */
export function needsAdminToken(path: string): boolean {
  return !OPEN_ADMIN_PATHS.has(path);
}

const UNAUTHORIZED = renderError(
  new SwitchyardError('SWITCHYARD_UNAUTHORIZED', 'This admin path needs a bearer token (Authorization: Bearer <token>).', {
    headers: { 'www-authenticate': `Bearer realm="${ADMIN_REALM}"`, 'cache-control': 'no-store' },
  }),
);

/**
 * The 401 for a missing or wrong token, a complete answer the worker writes
 * as is: `WWW-Authenticate: Bearer realm="switchyard-admin"` and the
 * OpenAI-style error body with code `SWITCHYARD_UNAUTHORIZED`. Missing and
 * wrong tokens get the same answer, so a caller learns nothing about which it was.
 */
export function unauthorizedAnswer(): ErrorAnswer {
  return UNAUTHORIZED;
}

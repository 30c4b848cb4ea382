/**
 * Which configuration values are secrets. Errors show the value a check
 * refused (an operator needs to see `listen: 8080` to fix it), and
 * `check-config` prints the effective configuration, but neither may ever
 * print an API key, token or password: log collectors keep stderr. Files
 * that hold secrets (`apiKeyFile`, `passwordFile`, `adminTokenFile`) are
 * paths, not secrets.
 */

/** Keys whose values are secrets wherever they appear (sections, sources, maps). */
const SECRET_KEY = /^(apiKey|password|token|secret)$|(ApiKey|Password|Token|Secret)$/;

/** Placeholder printed instead of a secret value. */
export const REDACTED = '(secret, not shown)';

/** True when `key` (one path segment) names a secret value. */
export function isSecretKey(key: PropertyKey): boolean {
  return typeof key === 'string' && SECRET_KEY.test(key);
}

/** True when any segment of `path` names a secret value. */
export function isSecretPath(path: readonly PropertyKey[]): boolean {
  return path.some(isSecretKey);
}

/** `value` with credentials in URLs (`scheme://user:password@host`) replaced. */
export function withoutUrlCredentials(value: string): string {
  return value.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1(credentials not shown)@');
}

/**
 * A deep copy of `value` with every secret key's value replaced by
 * {@link REDACTED} and URL credentials removed from strings; safe to print.
 */
export function redact(value: unknown): unknown {
  if (typeof value === 'string') return withoutUrlCredentials(value);
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = isSecretKey(key) && child !== undefined ? REDACTED : redact(child);
  return out;
}

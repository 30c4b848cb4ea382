/**
 * The API keys file of the quota runs (`auth.apiKeysFile`): one tenant with
 * a request-rate limit and one key for it, in the format docs/shared-state.md
 * documents. Written to a temporary directory the caller removes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A written keys file and the key it holds. */
export interface KeysFile {
  readonly path: string;
  /** The bearer token a client sends (`Authorization: Bearer <key>`). */
  readonly key: string;
  readonly tenant: string;
  remove(): void;
}

/** The file's text: one tenant limited to `requestsPerSecond`, one key for it. */
export function keysFileText(tenant: string, key: string, requestsPerSecond: number): string {
  return `${JSON.stringify({ tenants: { [tenant]: { requestsPerSecond } }, keys: [{ key, tenant }] }, null, 2)}\n`;
}

/** Writes a keys file with a fresh random key. */
export function writeKeysFile(tenant: string, requestsPerSecond: number): KeysFile {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-keys-'));
  const key = `sk-bench-${randomBytes(16).toString('hex')}`;
  const path = join(dir, 'api-keys.json');
  writeFileSync(path, keysFileText(tenant, key, requestsPerSecond), { mode: 0o600 });
  return { path, key, tenant, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

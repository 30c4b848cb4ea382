/**
 * The API key of `switchyard bench load --api-key-file`: read from a file so
 * that it never shows in a process list or a shell history, and never
 * repeated anywhere: no message here quotes the file's content, and the
 * report writer removes the key from anything a target echoed back
 * ({@link redact}).
 */
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from './options.ts';

/** The key and anything worth telling the user about its file. */
export interface ApiKey {
  readonly key: string;
  /** Set when the file is readable by every user on the machine. */
  readonly warning: string | undefined;
}

/**
 * Reads the key: the file's content without surrounding whitespace, one line
 * of printable ASCII (what fits in an Authorization header). A world-readable
 * file is used with a warning rather than refused: Kubernetes mounts Secrets
 * 0644 by default.
 */
export function readApiKey(path: string): ApiKey {
  let text: string;
  let mode: number;
  try {
    text = readFileSync(path, 'utf8');
    mode = statSync(path).mode;
  } catch (err) {
    throw new UsageError(`--api-key-file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const key = text.trim();
  if (key === '') throw new UsageError(`--api-key-file: ${path} is empty`);
  // Not quoted: a wrong file may hold another secret.
  if (!/^[\x21-\x7e]+$/.test(key)) throw new UsageError(`--api-key-file: ${path} must hold one key: a single line of printable ASCII without spaces`);
  const warning = (mode & 0o004) !== 0 ? `warning: ${path} is readable by every user on this machine (mode ${(mode & 0o777).toString(8)}); chmod 600 keeps the key yours` : undefined;
  return { key, warning };
}

/** `text` with every occurrence of `secret` replaced; `secret` undefined leaves it as is. */
export function redact(text: string, secret: string | undefined): string {
  return secret === undefined ? text : text.replaceAll(secret, '[api key]');
}

/**
 * Reads a file that holds one secret (an API key, a bearer token), as
 * mounted from a Kubernetes Secret or written by `echo KEY > file`.
 *
 * The content becomes an HTTP header value on every request, so a file that
 * is accepted must be usable: a second line or a control character used to
 * pass start-up and then fail every request. It is checked once, at
 * start-up, and a problem is a configuration error that names the option
 * and the file, never the content.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { ConfigError } from './load.ts';

/** Largest secret file read (bytes): keys and tokens are far smaller, and a wrong path (a device, a log) must not be read whole. */
const MAX_SECRET_FILE_BYTES = 16 * 1024;

/**
 * The secret in `path`: the file's content with surrounding whitespace (the
 * trailing newline included) trimmed, which must be one non-empty line of
 * printable ASCII (0x20-0x7e).
 *
 * @param path file to read, synchronously (start-up only).
 * @param option the configuration option that named the file, for the
 *   message, e.g. `upstream.apiKeyFile`.
 * @throws ConfigError naming `option` and `path` (never the content) when the
 *   file cannot be read, is larger than 16 KiB, is empty, spans several
 *   lines, or holds a control or non-ASCII character.
 */
export function readSecretFile(path: string, option = 'secret file'): string {
  const where = `${option} ${path}`;
  let bytes: Buffer;
  try {
    bytes = readAtMost(path, MAX_SECRET_FILE_BYTES + 1);
  } catch (err) {
    throw new ConfigError(`${where}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (bytes.length > MAX_SECRET_FILE_BYTES) throw new ConfigError(`${where}: larger than ${MAX_SECRET_FILE_BYTES} bytes; it must hold only the key`);
  if (!isUtf8(bytes)) throw new ConfigError(`${where}: not text; it must hold only the key, on one line`);
  const value = bytes.toString('utf8').trim();
  const problem = secretValueProblem(value);
  if (problem !== undefined) throw new ConfigError(`${where}: ${problem}`);
  return value;
}

/**
 * Why `value` cannot be sent as a credential, or undefined when it can.
 * The reason never quotes the value.
 */
export function secretValueProblem(value: string): string | undefined {
  if (value === '') return 'empty; it must hold the key on one line';
  const lines = value.split(/\r\n|\r|\n/).length;
  if (lines > 1) return `holds ${lines} lines; it must hold only the key, on one line`;
  if (!/^[\x20-\x7e]+$/.test(value)) return 'holds a control or non-ASCII character; the key must be printable ASCII';
  return undefined;
}

function readAtMost(path: string, limit: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(limit);
    let filled = 0;
    while (filled < limit) {
      const n = readSync(fd, buffer, filled, limit - filled, null);
      if (n === 0) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

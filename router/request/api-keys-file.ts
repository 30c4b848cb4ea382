/**
 * The API keys file, loaded at start-up and reloaded when its content
 * changes.
 *
 * The failure story: the file is a mounted Kubernetes Secret. The kubelet
 * updates it by writing a new directory and swapping a symlink, so the
 * file's mtime (of the symlink target, read through the link) says little:
 * the content decides, by its SHA-256. During the swap the file may be
 * missing for an instant, and an operator may push a broken file. Neither
 * may cost the keys in use:
 * - at start-up a bad or unreadable file is a configuration error (the
 *   process exits 2 with a message naming the option, the file and the
 *   problem);
 * - on reload a bad or unreadable file keeps the last good keys and logs one
 *   error per distinct problem (not one per poll); never any key material.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { ConfigError } from '../config/load.ts';
import { ApiKeysFileError, parseApiKeys, type ApiKeySet } from './api-keys.ts';

/** Largest keys file read (bytes): thousands of keys fit; a wrong path (a device, a log) is not read whole. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** What the reloads report. */
export interface ApiKeysFileLog {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** What one look at the file found: nothing new, new keys now in force, or a new problem (the keys in force stay). */
export type ApiKeysCheck = 'unchanged' | 'reloaded' | 'kept';

export class ApiKeysFile {
  readonly path: string;
  readonly #log: ApiKeysFileLog;
  #keys: ApiKeySet;
  /** SHA-256 of the content last looked at (good or bad), or of the last unreadable state. */
  #seen: string;
  #checking = false;
  #timer: NodeJS.Timeout | undefined;

  private constructor(path: string, keys: ApiKeySet, seen: string, log: ApiKeysFileLog) {
    this.path = path;
    this.#keys = keys;
    this.#seen = seen;
    this.#log = log;
  }

  /**
   * Reads and parses the file now (start-up).
   * @throws ConfigError naming `auth.apiKeysFile`, the path and the problem.
   */
  static open(path: string, log: ApiKeysFileLog): ApiKeysFile {
    let bytes: Buffer | undefined;
    try {
      bytes = readSyncAtMost(path, MAX_FILE_BYTES);
    } catch (err) {
      throw new ConfigError(`auth.apiKeysFile ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    try {
      return new ApiKeysFile(path, parseBytes(bytes), digestOf(bytes), log);
    } catch (err) {
      if (err instanceof ApiKeysFileError) throw new ConfigError(`auth.apiKeysFile ${path}: ${err.message}`);
      throw err;
    }
  }

  /** The keys in force. */
  get keys(): ApiKeySet {
    return this.#keys;
  }

  /** Looks at the file every `intervalMs` (an unref'd timer: it never keeps the process alive). */
  start(intervalMs: number): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.check(), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Reads the file once and swaps the keys in when its content changed and parses. Never rejects. */
  async check(): Promise<ApiKeysCheck> {
    if (this.#checking) return 'unchanged';
    this.#checking = true;
    try {
      let bytes: Buffer | undefined;
      try {
        bytes = await readAtMost(this.path, MAX_FILE_BYTES);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'error';
        return this.#reject(`unreadable:${code}`, `cannot read it (${code})`);
      }
      const digest = digestOf(bytes);
      if (digest === this.#seen) return 'unchanged';
      let keys: ApiKeySet;
      try {
        keys = parseBytes(bytes);
      } catch (err) {
        if (!(err instanceof ApiKeysFileError)) throw err;
        return this.#reject(digest, err.message);
      }
      this.#keys = keys;
      this.#seen = digest;
      this.#log.info({ file: this.path, keys: keys.size, tenants: keys.tenants.size }, 'API keys reloaded');
      return 'reloaded';
    } finally {
      this.#checking = false;
    }
  }

  /** Keeps the keys in force; logs once per distinct problem. */
  #reject(seen: string, problem: string): ApiKeysCheck {
    if (seen === this.#seen) return 'unchanged';
    this.#seen = seen;
    this.#log.error({ file: this.path, problem }, 'API keys file not reloaded; keeping the keys in force');
    return 'kept';
  }
}

function parseBytes(bytes: Buffer | undefined): ApiKeySet {
  if (bytes === undefined) throw new ApiKeysFileError(`larger than ${MAX_FILE_BYTES} bytes`);
  return parseApiKeys(bytes.toString('utf8'));
}

function digestOf(bytes: Buffer | undefined): string {
  return bytes === undefined ? 'too-large' : createHash('sha256').update(bytes).digest('hex');
}

/** The file's bytes, or undefined for a file over `limit` bytes (not read: its size alone makes it invalid). */
function readSyncAtMost(path: string, limit: number): Buffer | undefined {
  const fd = openSync(path, 'r');
  try {
    if (fstatSync(fd).size > limit) return undefined;
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function readAtMost(path: string, limit: number): Promise<Buffer | undefined> {
  const handle = await open(path, 'r');
  try {
    if ((await handle.stat()).size > limit) return undefined;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

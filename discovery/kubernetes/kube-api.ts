/**
 * The HTTP side of talking to the Kubernetes API: paginated lists and watch
 * streams, authenticated from a `@kubernetes/client-node` {@link KubeConfig}.
 *
 * Why not the client's own `Watch`/`ListWatch` (client-node 2.0.1,
 * `dist/watch.js`, `dist/cache.js`):
 * - `Watch` swallows lines that are not JSON (`catch { // ignore parse errors }`),
 *   so a corrupted DELETED event would go unnoticed until the next re-list;
 *   here every line reaches the caller, who treats a bad one as a fault.
 * - `KubeConfig.applySecurityAuthentication` builds a new undici `Agent` on
 *   every call (`createDispatcher`), i.e. one connection pool per watch; here
 *   one `Agent` is kept and rebuilt only when the TLS material changes.
 * The KubeConfig still does everything auth-related (`applyToHTTPSOptions`:
 * token files re-read every 60 s, exec plugins, OIDC, client certificates,
 * CA, tls-server-name, insecure-skip-tls-verify). A cluster `proxy-url` is not
 * supported. Every answer body (list pages, watch streams, error Status
 * objects) is read through ../upstream-body.ts, which caps and discards them
 * and keeps their errors from escaping as uncaught exceptions.
 */
import { createHash } from 'node:crypto';
import { Agent } from 'undici';
import type { KubeConfig } from '@kubernetes/client-node';
import { upstreamGet, type UpstreamAnswer } from '../upstream-body.ts';

/** A non-2xx answer from the API server; `statusCode` 410 means Gone (re-list). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly statusCode: number;

  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
}

/** One page-joined list answer. */
export interface ListResult {
  readonly items: readonly unknown[];
  /** The list's `metadata.resourceVersion` (watch from here). */
  readonly resourceVersion: string;
}

/**
 * The list/watch operations a watcher needs (declared here, next to the one
 * implementation, because the fake in tests speaks HTTP and uses it too).
 */
export interface ListWatchApi {
  /** Lists every object at `path` matching `query`, following `continue` tokens. */
  list(path: string, query: Readonly<Record<string, string>>, signal: AbortSignal): Promise<ListResult>;
  /**
   * Opens a watch at `path` and calls `onLines` with the complete lines of
   * each chunk, in order. Resolves when the server ends the stream cleanly,
   * rejects on any transport error, a non-200 answer ({@link KubeApiError}),
   * a stream that ends inside a line, or a line over the size cap.
   */
  watch(path: string, query: Readonly<Record<string, string>>, signal: AbortSignal, onLines: (lines: readonly string[]) => void): Promise<void>;
}

/** Limits of {@link KubeApi}. */
export interface KubeApiSettings {
  /** Budget for one list page (ms). */
  readonly listTimeoutMs: number;
  /** Objects per list page. */
  readonly pageSize?: number;
  /** Largest list page body (bytes). */
  readonly maxListBytes?: number;
  /** Largest single watch event line (bytes). */
  readonly maxLineBytes?: number;
}

interface HttpsOptions {
  headers?: Record<string, string | number | string[]>;
  ca?: Buffer | string;
  cert?: Buffer | string;
  key?: Buffer | string;
  rejectUnauthorized?: boolean;
  servername?: string;
  auth?: string;
}

/** {@link ListWatchApi} over undici, authenticated by a KubeConfig. */
export class KubeApi implements ListWatchApi {
  readonly #config: KubeConfig;
  readonly #server: URL;
  readonly #settings: Required<KubeApiSettings>;
  #agent: Agent | undefined;
  #agentKey = '';

  constructor(config: KubeConfig, settings: KubeApiSettings) {
    const cluster = config.getCurrentCluster();
    if (cluster === null) throw new Error('kubeconfig has no current cluster');
    this.#config = config;
    this.#server = new URL(cluster.server);
    this.#settings = { pageSize: 500, maxListBytes: 64 * 1024 * 1024, maxLineBytes: 16 * 1024 * 1024, ...settings };
  }

  /** Base URL of the API server (for status and logs). */
  get server(): string {
    return this.#server.origin;
  }

  async list(path: string, query: Readonly<Record<string, string>>, signal: AbortSignal): Promise<ListResult> {
    const items: unknown[] = [];
    let token: string | undefined;
    let resourceVersion: string;
    do {
      const page = { ...query, limit: String(this.#settings.pageSize), ...(token === undefined ? {} : { continue: token }) };
      const body = await this.#getJson(path, page, signal);
      const list = body as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } } | null;
      if (list === null || typeof list !== 'object' || !Array.isArray(list.items)) throw new Error(`list ${path}: answer has no items`);
      items.push(...(list.items as unknown[]));
      resourceVersion = typeof list.metadata?.resourceVersion === 'string' ? list.metadata.resourceVersion : '';
      token = typeof list.metadata?.continue === 'string' && list.metadata.continue !== '' ? list.metadata.continue : undefined;
    } while (token !== undefined);
    return { items, resourceVersion };
  }

  async watch(
    path: string,
    query: Readonly<Record<string, string>>,
    signal: AbortSignal,
    onLines: (lines: readonly string[]) => void,
  ): Promise<void> {
    await this.#get(path, { ...query, watch: 'true' }, signal, { bodyTimeout: 0 }, `watch ${path}`, async (answer) => {
      if (answer.statusCode !== 200) throw await statusError(answer, path);
      await answer.lines(this.#settings.maxLineBytes, onLines);
    });
  }

  /** Closes the connection pool. */
  async close(): Promise<void> {
    const agent = this.#agent;
    this.#agent = undefined;
    await agent?.destroy();
  }

  async #getJson(path: string, query: Readonly<Record<string, string>>, signal: AbortSignal): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.#settings.listTimeoutMs);
    const timeouts = { headersTimeout: this.#settings.listTimeoutMs, bodyTimeout: this.#settings.listTimeoutMs };
    return this.#get(path, query, AbortSignal.any([signal, timeout]), timeouts, `list ${path}`, async (answer) => {
      if (answer.statusCode !== 200) throw await statusError(answer, path);
      return JSON.parse(await answer.text(this.#settings.maxListBytes)) as unknown;
    });
  }

  /** One authenticated GET; its body is read only through `read` (see upstream-body.ts). */
  async #get<T>(
    path: string,
    query: Readonly<Record<string, string>>,
    signal: AbortSignal,
    timeouts: { headersTimeout?: number; bodyTimeout: number },
    label: string,
    read: (answer: UpstreamAnswer) => Promise<T>,
  ): Promise<T> {
    const options: HttpsOptions = { headers: {} };
    await this.#config.applyToHTTPSOptions(options);
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = String(value);
    if (options.auth !== undefined) headers['authorization'] = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    const url = new URL(this.#server.pathname.replace(/\/+$/, '') + path, this.#server);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const get = { url, headers, signal, headersTimeout: timeouts.headersTimeout ?? this.#settings.listTimeoutMs, bodyTimeout: timeouts.bodyTimeout, label };
    return upstreamGet(this.#agentFor(options), get, read);
  }

  /** One pool while the TLS material stays the same; a rotated certificate gets a new one. */
  #agentFor(options: HttpsOptions): Agent {
    const tls = {
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      ...(options.cert === undefined ? {} : { cert: options.cert }),
      ...(options.key === undefined ? {} : { key: options.key }),
      ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized }),
      ...(options.servername === undefined ? {} : { servername: options.servername }),
    };
    const hash = createHash('sha256');
    for (const [name, value] of Object.entries(tls)) hash.update(`${name}\0${String(value)}\0`);
    const key = hash.digest('hex');
    if (this.#agent === undefined || key !== this.#agentKey) {
      const old = this.#agent;
      // Keep-alive probes at 30 s, as client-go does, so a dead connection is noticed.
      this.#agent = new Agent({ connect: { ...tls, keepAlive: true, keepAliveInitialDelay: 30_000 }, connections: 4 });
      this.#agentKey = key;
      void old?.close();
    }
    return this.#agent;
  }
}

/** The error for a non-2xx answer, with the reason and message of its Status body when it has one. */
async function statusError(answer: UpstreamAnswer, path: string): Promise<KubeApiError> {
  let detail = '';
  try {
    const status = JSON.parse(await answer.excerpt(64 * 1024)) as { reason?: unknown; message?: unknown };
    detail = [status.reason, status.message].filter((part) => typeof part === 'string').join(': ');
  } catch {
    // not a Status object; the code alone says enough
  }
  return new KubeApiError(answer.statusCode, `${path}: answered ${answer.statusCode}${detail === '' ? '' : ` (${detail})`}`);
}

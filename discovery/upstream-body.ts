/**
 * The one owner of every undici response body the router reads itself: engine
 * scrapes (`/metrics`), model probes (`/v1/models`), and the Kubernetes API's
 * list, watch and error answers. (The forwarder streams engine answers through
 * undici's dispatch handler API and never holds a body object, so it is not
 * here.)
 *
 * The failure this prevents: an undici body that is destroyed before anyone
 * read it emits 'error' (RequestAbortedError) a tick later, and with no
 * listener that is an uncaught exception: the process exits. One engine
 * answering 401 to `/metrics` (vLLM with `--api-key`), 404 (no metrics) or 503
 * (a sidecar) took down every router replica within a second that way,
 * because every replica scrapes every engine. The rules kept here, and kept
 * by lint for everyone else (only this module may call `.request()`):
 * - an 'error' listener sits on every body from the moment it is handed over;
 * - every body is read to its end, cut at a byte cap, or discarded, never
 *   left half-read: {@link upstreamGet} discards whatever its reader did not
 *   consume, whether the reader returned or threw;
 * - every read is bounded by a byte cap, and in time by the caller's signal
 *   and undici's body timeout.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';

/** One GET whose answer {@link upstreamGet} hands to a reader. */
export interface UpstreamGet {
  readonly url: URL;
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborts the exchange, including a background discard of the body. */
  readonly signal?: AbortSignal;
  /** Longest wait for the response headers (ms); 0 disables. */
  readonly headersTimeout: number;
  /** Longest gap between body chunks (ms); 0 disables (watch streams, bounded by `signal` instead). */
  readonly bodyTimeout: number;
  /** What this request is, put before the messages of errors raised here (e.g. `list /api/v1/pods`). */
  readonly label?: string;
}

/**
 * An answer whose body stays owned by {@link upstreamGet}. A reader calls at
 * most one of the reading methods, once, and awaits it before returning; the
 * body is no longer readable once the reader has settled.
 */
export interface UpstreamAnswer {
  readonly statusCode: number;
  /**
   * The whole body as UTF-8. Rejects once it passes `maxBytes` (bytes; the
   * transfer is cut there, or not started when Content-Length already says
   * so), and on any transport error or timeout.
   */
  text(maxBytes: number): Promise<string>;
  /**
   * At most `maxBytes` (bytes) of the body as UTF-8, the rest discarded; for
   * the detail of an error answer. Never rejects: a transport error ends the
   * excerpt where it stands.
   */
  excerpt(maxBytes: number): Promise<string>;
  /**
   * Calls `onLines` with the complete, non-blank lines of each chunk, in
   * order. Resolves when the body ends cleanly; rejects on a transport error,
   * a body that ends inside a line, a line over `maxLineBytes` (UTF-16 code
   * units, which never exceed the line's byte length), or whatever `onLines`
   * throws.
   */
  lines(maxLineBytes: number, onLines: (lines: readonly string[]) => void): Promise<void>;
}

/** Answers no longer than this (bytes) are discarded by reading them, which keeps the connection for reuse; longer ones close it. */
const DISCARD_READ_LIMIT_BYTES = 64 * 1024;

/**
 * GETs `get.url` through `dispatcher` and resolves with what `read` makes of
 * the answer, whatever its status. Rejects with the transport error (refused,
 * reset, timeout, abort) or whatever `read` throws. When `read` settles, any
 * part of the body it did not consume is discarded in the background (bounded
 * by `get.signal` and `get.bodyTimeout`), so its connection is freed or
 * closed and no body error can go unheard.
 */
export async function upstreamGet<T>(dispatcher: Dispatcher, get: UpstreamGet, read: (answer: UpstreamAnswer) => Promise<T>): Promise<T> {
  const response = await dispatcher.request({
    origin: get.url.origin,
    path: get.url.pathname + get.url.search,
    method: 'GET',
    headers: { ...get.headers },
    ...(get.signal === undefined ? {} : { signal: get.signal }),
    headersTimeout: get.headersTimeout,
    bodyTimeout: get.bodyTimeout,
  });
  const answer = new OwnedBody(response, get.label === undefined ? '' : `${get.label}: `);
  try {
    return await read(answer);
  } finally {
    answer.release();
  }
}

/** Options of {@link fetchText}. */
export interface FetchTextOptions {
  /** Budget for the whole exchange (ms). */
  readonly timeoutMs: number;
  /** Largest body accepted (bytes); a larger one fails the fetch. */
  readonly maxBytes: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * GETs `url` through `dispatcher` and returns the body as UTF-8 text (engine
 * scrapes and model probes). Rejects with `answered <status>` on any status
 * but 200 (that body is discarded), on a timeout, a transport error, or a body
 * over `maxBytes`.
 */
export function fetchText(dispatcher: Dispatcher, url: URL, options: FetchTextOptions): Promise<string> {
  const get: UpstreamGet = {
    url,
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    signal: AbortSignal.timeout(options.timeoutMs),
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  };
  return upstreamGet(dispatcher, get, async (answer) => {
    if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}`);
    return answer.text(options.maxBytes);
  });
}

type Body = Dispatcher.ResponseData['body'];

/** The reading side of one answer; see {@link UpstreamAnswer}. */
class OwnedBody implements UpstreamAnswer {
  readonly statusCode: number;
  readonly #body: Body;
  readonly #declaredBytes: number | undefined;
  readonly #prefix: string;
  #read = false;
  #released = false;

  constructor(response: Dispatcher.ResponseData, prefix: string) {
    this.statusCode = response.statusCode;
    this.#body = response.body;
    // First, before anything can destroy the body: its errors surface through
    // the reads below (or, once released, do not matter), never as an
    // uncaught 'error' event.
    this.#body.on('error', ignore);
    const declared = Number(response.headers['content-length']);
    this.#declaredBytes = Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
    this.#prefix = prefix;
  }

  async text(maxBytes: number): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    if (this.#declaredBytes !== undefined && this.#declaredBytes > maxBytes) {
      this.#claim(); // so release() closes the connection instead of reading the body away
      throw this.#tooLarge('body', maxBytes);
    }
    // Leaving the loop early destroys the body, which closes its connection.
    for await (const chunk of this.#take()) {
      size += chunk.length;
      if (size > maxBytes) throw this.#tooLarge('body', maxBytes);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }

  async excerpt(maxBytes: number): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of this.#take()) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= maxBytes) break;
      }
    } catch {
      // the excerpt ends where the transport failed
    }
    return Buffer.concat(chunks, size).subarray(0, maxBytes).toString('utf8');
  }

  async lines(maxLineBytes: number, onLines: (lines: readonly string[]) => void): Promise<void> {
    const decoder = new StringDecoder('utf8'); // a character may straddle two chunks
    let partial = '';
    for await (const chunk of this.#take()) {
      const parts = (partial + decoder.write(chunk)).split('\n');
      partial = parts.pop() as string;
      if (partial.length > maxLineBytes) throw this.#tooLarge('line', maxLineBytes);
      const complete = parts.filter((line) => line.trim() !== '');
      if (complete.length > 0) onLines(complete);
    }
    partial += decoder.end();
    if (partial.trim() !== '') throw new Error(`${this.#prefix}body ended inside a line`);
  }

  /**
   * Discards what the reader left: an untouched body is read away when short
   * (keeping its connection), else it and its connection are closed. Safe to
   * call more than once.
   */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    const body = this.#body;
    if (body.readableEnded || body.destroyed) return;
    if (this.#read) body.destroy();
    else body.dump({ limit: DISCARD_READ_LIMIT_BYTES }).catch(ignore);
  }

  /** Hands the body to exactly one read, while the reader is running. */
  #take(): AsyncIterable<Buffer> {
    this.#claim();
    return this.#body as AsyncIterable<Buffer>;
  }

  #claim(): void {
    if (this.#read || this.#released) throw new Error('an upstream body is read at most once, while its reader runs');
    this.#read = true;
  }

  #tooLarge(what: 'body' | 'line', maxBytes: number): Error {
    return new Error(`${this.#prefix}${what} larger than ${maxBytes} bytes`);
  }
}

function ignore(): void {
  // see OwnedBody's constructor and release()
}

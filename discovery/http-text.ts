import type { Dispatcher } from 'undici';

/** Options of {@link fetchText}. */
export interface FetchTextOptions {
  /** Budget for the whole exchange (ms). */
  readonly timeoutMs: number;
  /** Largest body accepted (bytes); a larger one fails the fetch. */
  readonly maxBytes: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * GETs `url` through `dispatcher` and returns the body as UTF-8 text.
 * Rejects on a non-200 status, a timeout, or a body over `maxBytes` (the
 * transfer is cut as soon as it passes the cap, so a huge body costs little).
 */
export async function fetchText(dispatcher: Dispatcher, url: URL, options: FetchTextOptions): Promise<string> {
  const response = await dispatcher.request({
    origin: url.origin,
    path: url.pathname + url.search,
    method: 'GET',
    headers: { ...options.headers },
    signal: AbortSignal.timeout(options.timeoutMs),
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  if (response.statusCode !== 200) {
    response.body.destroy();
    throw new Error(`answered ${response.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > options.maxBytes) {
      response.body.destroy();
      throw new Error(`body larger than ${options.maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

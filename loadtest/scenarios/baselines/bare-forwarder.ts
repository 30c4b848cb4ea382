/**
 * The floor Node allows for a forwarding proxy, written for the benchmarks:
 * `node:http` accepts and parses, one undici `Pool` per upstream forwards
 * with `dispatch`, and the answer is written to the raw response as it
 * arrives. The body is read into memory first, as any router must before it
 * can route on it, and forwarded as one buffer; nothing looks inside it. No
 * routing, no metrics, no timeouts beyond the libraries' defaults, no header
 * filtering beyond the hop-by-hop rule. It makes the process settings
 * `switchyard serve` makes (router/cli/process-tuning.ts: V8's collector
 * flags, V8's helper threads behind the event loop), which tune Node, not
 * the router. What switchyard costs above this is the router's own work;
 * what this costs is Node's and undici's.
 *
 *   node loadtest/scenarios/baselines/bare-forwarder.ts --listen 127.0.0.1:0 --upstream http://127.0.0.1:8000
 *
 * Prints `{"msg":"bare forwarder listening","port":N}` on stdout once it listens.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import { tuneProcess } from '../../../router/cli/process-tuning.ts';

// Connection-scoped headers a proxy must not pass on (RFC 9110 §7.6.1); the rest go through.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade', 'proxy-connection', 'host']);

function requestHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (!HOP_BY_HOP.has(name.toLowerCase())) out.push(name, raw[i + 1] as string);
  }
  return out;
}

function responseHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  for (const name of HOP_BY_HOP) delete headers[name];
  return headers;
}

/** Streams one upstream answer to the client response. */
class Relay implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  #status = 502;
  #headers: IncomingHttpHeaders = {};
  #started = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  onRequestStart(): void {
    // Nothing to set up: the answer is relayed as it comes.
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    this.#status = status;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#start();
    if (!this.#res.write(chunk)) {
      controller.pause();
      this.#res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    this.#start();
    this.#res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, _err: Error): void {
    if (this.#started) this.#res.destroy();
    else this.#res.writeHead(502).end();
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#res.writeHead(this.#status, responseHeaders(this.#headers));
  }
}

function main(): void {
  tuneProcess();
  const { values } = parseArgs({ options: { listen: { type: 'string', default: '127.0.0.1:0' }, upstream: { type: 'string' } } });
  if (values.upstream === undefined) throw new Error('--upstream URL is required');
  const upstream = new URL(values.upstream);
  const pool = new Pool(upstream.origin, { connections: 4096 });
  const server = createServer({ noDelay: true }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      pool.dispatch({ origin: upstream.origin, path: req.url ?? '/', method: req.method ?? 'GET', headers: requestHeaders(req.rawHeaders), body }, new Relay(res));
    });
  });
  const colon = values.listen.lastIndexOf(':');
  server.listen({ host: values.listen.slice(0, colon), port: Number(values.listen.slice(colon + 1)), backlog: 4096 }, () => {
    const address = server.address();
    console.log(JSON.stringify({ msg: 'bare forwarder listening', port: typeof address === 'object' && address !== null ? address.port : 0 }));
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void pool.close();
  });
}

main();

/**
 * The oracle router of the prefix-affinity benchmark: an HTTP front for
 * in-process engine simulators that routes every request on the engines'
 * true cache contents, which no real router can see. It is a ceiling for
 * hit ratios, not a product feature, and it lives in loadtest/ only.
 *
 * Per request it reads the body, asks every simulator how many of the
 * prompt's tokens it holds (`EngineSimulator.cachedPrefixTokens`, pure: the
 * question changes no cache), and sends the request to the engine holding the
 * most among those not overloaded; ties and the all-miss case go to the least
 * loaded of them. Overloaded means, as in the router's bound
 * (router/scheduling/load-bound.ts), a load score (outstanding requests ÷
 * batch slots) above max(floor, (1 + epsilon) × the fleet's mean score), or
 * an estimated queue of at least `maxWaiting`. When every engine is over the
 * score bound it takes the least loaded one with room in its queue; when
 * every queue is full it sheds with 429 and `Retry-After: 1`, so its
 * admission matches a router configured with the same `admission.maxWaiting`
 * and hit ratios compare at equal shedding.
 *
 * Outstanding requests per engine are the larger of the engine's own
 * running + waiting and the oracle's requests still open to it (fresh within
 * the tick, before the engine has read them). Responses stream through
 * unchanged, headers minus hop-by-hop ones. GETs and bodies that are not JSON
 * go to the least loaded engine.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import { errorBody, errorHeaders, SwitchyardError } from '../../router/errors/errors.ts';
import { listenOn, readAll } from '../sim/node-http.ts';
import type { EngineSimulator } from '../sim/server.ts';

/** Settings of the oracle. */
export interface PrefixOracleOptions {
  /** Simulators, listening before {@link PrefixOracle.listen}; the caller owns and closes them. */
  readonly engines: readonly EngineSimulator[];
  /** Shed when every engine's estimated queue is at least this (the router's `admission.maxWaiting`, default 5). */
  readonly maxWaiting: number;
  /** Headroom over the mean load score before an engine counts as overloaded (default 0.5, the router's epsilon). */
  readonly epsilon?: number;
  /** A load score under this never counts as overloaded (default 0.5: free batch slots, the router's floor). */
  readonly floor?: number;
  /** Connections per engine (default 256). */
  readonly connections?: number;
}

/** What the oracle did since start. */
export interface OracleStats {
  /** Requests sent to each engine, in engine order. */
  readonly routed: number[];
  /** Requests sent to an engine that held some of their prompt. */
  cacheRouted: number;
  /** Requests answered 429. */
  shed: number;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length']);

/** The oracle's HTTP server; see the file header. */
export class PrefixOracle {
  readonly stats: OracleStats;
  readonly #engines: readonly EngineSimulator[];
  /** One pool per engine, made at listen (an engine's URL is known once it listens). */
  #pools: Pool[] = [];
  readonly #connections: number;
  readonly #open: number[];
  readonly #maxWaiting: number;
  readonly #epsilon: number;
  readonly #floor: number;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  constructor(options: PrefixOracleOptions) {
    if (options.engines.length === 0) throw new Error('the prefix oracle needs at least one engine');
    this.#engines = options.engines;
    this.#connections = options.connections ?? 256;
    this.#open = options.engines.map(() => 0);
    this.#maxWaiting = options.maxWaiting;
    this.#epsilon = options.epsilon ?? 0.5;
    this.#floor = options.floor ?? 0.5;
    this.stats = { routed: options.engines.map(() => 0), cacheRouted: 0, shed: 0 };
    this.#server = createServer({ keepAliveTimeout: 5_000, noDelay: true }, (req, res) => void this.#handle(req, res));
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Starts listening (the engines must be listening already); resolves with the bound port. */
  async listen(host = '127.0.0.1', port = 0): Promise<number> {
    this.#pools = this.#engines.map((engine) => new Pool(engine.url, { connections: this.#connections, pipelining: 1 }));
    this.#port = await listenOn(this.#server, host, port);
    return this.#port;
  }

  /** Stops listening, destroys open client connections and closes the engine pools (not the engines). */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await Promise.all(this.#pools.map((pool) => pool.destroy()));
  }

  /**
   * The engine index a request with `payload` (parsed JSON body; undefined
   * for none) goes to now, or undefined when every queue is full. Reads the
   * engines' caches without changing them.
   */
  choose(payload: Readonly<Record<string, unknown>> | undefined): { engine: number; cachedTokens: number } | undefined {
    const n = this.#engines.length;
    const scores = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const engine = this.#engines[i] as EngineSimulator;
      const outstanding = Math.max(this.#open[i] as number, engine.scheduler.running + engine.scheduler.waiting);
      scores[i] = outstanding / Math.max(1, engine.knobs.maxSeqs);
      sum += scores[i] as number;
    }
    const limit = Math.max(this.#floor, (1 + this.#epsilon) * (sum / n));
    let least = -1;
    let best = -1;
    let bestCached = -1;
    for (let i = 0; i < n; i++) {
      const engine = this.#engines[i] as EngineSimulator;
      const queue = Math.max(engine.scheduler.waiting, (this.#open[i] as number) - engine.knobs.maxSeqs);
      if (queue >= this.#maxWaiting) continue;
      const score = scores[i] as number;
      if (least < 0 || score < (scores[least] as number)) least = i;
      if (score > limit) continue;
      const cached = payload === undefined ? 0 : engine.cachedPrefixTokens(payload);
      if (cached > bestCached || (cached === bestCached && score < (scores[best] as number))) {
        best = i;
        bestCached = cached;
      }
    }
    if (best >= 0) return { engine: best, cachedTokens: bestCached };
    return least >= 0 ? { engine: least, cachedTokens: 0 } : undefined;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    let payload: Record<string, unknown> | undefined;
    if (body.length > 0) {
      try {
        const parsed: unknown = JSON.parse(body.toString('utf8'));
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
      } catch {
        // not JSON: the engine answers it (400), the oracle only places it
      }
    }
    const choice = this.choose(payload);
    if (choice === undefined) {
      this.stats.shed++;
      const err = new SwitchyardError('SWITCHYARD_OVERLOADED', 'Every engine is saturated; retry shortly.', { retryAfterSeconds: 1 });
      const text = errorBody(err);
      res.writeHead(err.status, { ...errorHeaders(err), 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    const { engine } = choice;
    this.stats.routed[engine] = (this.stats.routed[engine] ?? 0) + 1;
    if (choice.cachedTokens > 0) this.stats.cacheRouted++;
    this.#open[engine] = (this.#open[engine] ?? 0) + 1;
    try {
      await this.#forward(this.#pools[engine] as Pool, req, res, body);
    } finally {
      this.#open[engine] = (this.#open[engine] ?? 1) - 1;
    }
  }

  /** Sends the request upstream and streams the answer back; the client's leaving aborts the upstream request. */
  async #forward(pool: Pool, req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const aborted = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) aborted.abort();
    };
    res.once('close', onClose);
    try {
      const upstream = await pool.request({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: endToEnd(req.headers),
        body: body.length > 0 ? body : null,
        signal: aborted.signal,
      });
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(upstream.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
      const length = upstream.headers['content-length'];
      if (typeof length === 'string') headers['content-length'] = length;
      res.writeHead(upstream.statusCode, headers);
      await pipeline(upstream.body, res);
    } catch {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":{"message":"engine failed","type":"upstream_error","param":null,"code":"SWITCHYARD_UPSTREAM_FAILED"}}');
      else res.destroy();
    } finally {
      res.off('close', onClose);
    }
  }
}

function endToEnd(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

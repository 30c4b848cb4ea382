/**
 * An OpenAI/vLLM look-alike engine for tests, the demo and benchmarks: chat
 * and completions (streamed and not, tool calls included), embeddings,
 * `/v1/models`, `/health`, `/metrics` in vLLM's format, a bounded number of
 * running sequences with a visible waiting queue, and faults on demand.
 *
 * It records, per `x-request-id`, what it received and a SHA-256 of the
 * bytes it sent, so tests can prove the router changed nothing.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { fragments, SSE_DONE, sseEvent, tokenText, toolArguments } from './content.ts';
import { DEFAULT_KNOBS, knobsForRequest, type SimKnobs } from './knobs.ts';
import { renderMetrics, TtftHistogram } from './metrics-text.ts';
import { PrefixCache, promptBlocks } from './prefix-cache.ts';
import { ResponseWriter } from './response-writer.ts';
import { seededRng } from './random.ts';
import { SeqScheduler } from './scheduler.ts';

/** What the simulator received for one request id. */
export interface ReceivedRecord {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly bodySha256: string;
  readonly bodyBytes: number;
}

/** What the simulator sent for one request id. */
export interface SentRecord {
  readonly status: number;
  readonly sha256: string;
  readonly bytes: number;
  /** The response ended normally (not killed, not abandoned by the client). */
  readonly complete: boolean;
}

/** Options of one simulated engine. */
export interface SimOptions {
  readonly model: string;
  readonly knobs?: Partial<SimKnobs>;
  /** Seeds the split positions and fail decisions. */
  readonly seed?: number;
}

const RECORD_LIMIT = 20_000;

/** One simulated engine; listen on loopback with {@link EngineSimulator.listen}. */
export class EngineSimulator {
  readonly model: string;
  readonly knobs: SimKnobs;
  readonly scheduler = new SeqScheduler();
  /** Inference requests received per `x-session-id`, to tell which engine served which conversation. */
  readonly sessions = new Map<string, number>();
  readonly #server: Server;
  readonly #received = new Map<string, ReceivedRecord>();
  readonly #sent = new Map<string, SentRecord>();
  readonly #live = new Map<string, ResponseWriter>();
  readonly #ttft = new TtftHistogram();
  readonly #prefixCache = new PrefixCache();
  readonly #sockets = new Set<Socket>();
  #succeeded = 0;
  #requests = 0;
  #port = 0;

  constructor(options: SimOptions) {
    this.model = options.model;
    this.knobs = { ...DEFAULT_KNOBS, ...options.knobs };
    this.#random = seededRng(options.seed ?? 1);
    this.#server = createServer({ keepAliveTimeout: 5_000, noDelay: true }, (req, res) => void this.#handle(req, res));
    this.#server.on('connection', (socket: Socket) => {
      if (this.knobs.refuse) {
        socket.destroy();
        return;
      }
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Inference (POST) requests received since start; `/metrics` scrapes and `/v1/models` are not counted. */
  get requests(): number {
    return this.#requests;
  }

  /** Starts listening; resolves with the bound port. */
  listen(host = '127.0.0.1', port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ host, port, backlog: 4096 }, () => {
        const address = this.#server.address();
        this.#port = typeof address === 'object' && address !== null ? address.port : port;
        resolve(this.#port);
      });
    });
  }

  /** Stops listening and destroys every open connection. */
  close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** What arrived for `requestId`, if recorded. */
  received(requestId: string): ReceivedRecord | undefined {
    return this.#received.get(requestId);
  }

  /** Bytes written so far for a response still being generated. */
  progress(requestId: string): number | undefined {
    return this.#live.get(requestId)?.bytes;
  }

  /** What was sent for `requestId`, once the response is over. */
  sent(requestId: string): SentRecord | undefined {
    return this.#sent.get(requestId);
  }

  /** A float in [0, 1) from a small deterministic generator seeded per engine. */
  readonly #random: () => number;

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Inference requests only: scrapes and model listings must not look like routed traffic.
    if (req.method === 'POST') {
      this.#requests++;
      const sessionKey = req.headers['x-session-id'];
      if (typeof sessionKey === 'string') this.sessions.set(sessionKey, (this.sessions.get(sessionKey) ?? 0) + 1);
    }
    const path = (req.url ?? '/').split('?')[0] as string;
    const body = await readAll(req);
    const requestId = typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : undefined;
    if (requestId !== undefined) {
      remember(this.#received, requestId, {
        method: req.method ?? '',
        path,
        headers: { ...req.headers },
        bodySha256: createHash('sha256').update(body).digest('hex'),
        bodyBytes: body.length,
      });
    }
    if (req.method === 'GET') return this.#handleGet(path, res);
    if (req.method !== 'POST') return sendJson(res, 405, vllmError('Method Not Allowed', 'MethodNotAllowed', 405));
    const knobs = knobsForRequest(this.knobs, req.headers);
    let payload: Record<string, unknown> = {};
    const isJson = !(req.headers['content-type'] ?? '').startsWith('multipart/');
    if (isJson) {
      try {
        payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return sendJson(res, 400, vllmError('Invalid JSON body', 'BadRequestError', 400));
      }
      if (payload['model'] !== this.model) {
        return sendJson(res, 404, vllmError(`The model \`${String(payload['model'])}\` does not exist.`, 'NotFoundError', 404));
      }
    }
    if (knobs.stall) return; // hold the request open forever (until the client or close() ends it)
    if (knobs.failRate > 0 && this.#random() < knobs.failRate) {
      return sendJson(res, 500, vllmError('Simulated engine failure', 'InternalServerError', 500));
    }
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    if (!(await this.scheduler.acquire(knobs.maxSeqs, gone.signal))) return;
    try {
      if (knobs.slowHeadersMs > 0) await sleep(knobs.slowHeadersMs, gone.signal);
      if (!gone.signal.aborted) await this.#generate(path, payload, knobs, res, requestId, gone.signal);
    } finally {
      this.scheduler.release(knobs.maxSeqs);
    }
  }

  #handleGet(path: string, res: ServerResponse): void {
    switch (path) {
      case '/health':
        res.writeHead(200).end();
        return;
      case '/v1/models':
        return sendJson(res, 200, {
          object: 'list',
          data: [{ id: this.model, object: 'model', created: 0, owned_by: 'vllm', root: this.model, parent: null, max_model_len: 8192 }],
        });
      case '/metrics':
        if (this.knobs.metricsHang) return;
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        if (this.knobs.metricsGarbage) {
          res.end('<html><body>502 Bad Gateway</body></html>\n\x00\xff vllm:num_requests_waiting{ 1');
          return;
        }
        res.end(
          renderMetrics({
            model: this.model,
            running: this.scheduler.running,
            waiting: this.scheduler.waiting,
            kvCacheUsage: Math.min(1, (this.knobs.kvFullBatch * this.scheduler.running) / Math.max(1, this.knobs.maxSeqs)),
            ttft: this.#ttft,
            requestsSucceeded: this.#succeeded,
            prefixCacheQueries: this.#prefixCache.queriedTokens,
            prefixCacheHits: this.#prefixCache.hitTokens,
          }),
        );
        return;
      default:
        return sendJson(res, 404, vllmError('Not Found', 'NotFoundError', 404));
    }
  }

  /** Writes the response; stops early (freeing the batch slot) once `gone` fires. */
  async #generate(path: string, payload: Record<string, unknown>, knobs: SimKnobs, res: ServerResponse, requestId: string | undefined, gone: AbortSignal): Promise<void> {
    const writer = new ResponseWriter(res, { split: knobs.split, dieAfterChunks: knobs.dieAfterChunks, random: this.#random });
    if (requestId !== undefined) this.#live.set(requestId, writer);
    res.once('close', () => {
      if (requestId !== undefined) this.#live.delete(requestId);
    });
    const started = performance.now();
    const finish = (status: number) => {
      if (!writer.dead) this.#succeeded++;
      if (requestId !== undefined) {
        remember(this.#sent, requestId, { status, sha256: writer.digest(), bytes: writer.bytes, complete: !writer.dead });
      }
    };
    if (path === '/v1/chat/completions' || path === '/v1/completions') {
      const chat = path === '/v1/chat/completions';
      this.#prefixCache.lookup(promptBlocks(payload));
      const tools = chat && Array.isArray(payload['tools']) && payload['tool_choice'] !== 'none';
      const id = `${chat ? 'chatcmpl' : 'cmpl'}-${requestId ?? this.#requests}`;
      if (payload['stream'] === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        await sleep(knobs.ttftMs, gone);
        this.#ttft.observe((performance.now() - started) / 1000);
        const events = chat ? chatEvents(this.model, id, knobs, tools, this.#requests) : completionEvents(this.model, id, knobs);
        for (let i = 0; i < events.length && !writer.dead; i++) {
          if (i > 0 && knobs.itlMs > 0) await sleep(knobs.itlMs, gone);
          await writer.write(events[i] as string);
        }
        writer.end(SSE_DONE);
        finish(200);
        return;
      }
      await sleep(knobs.ttftMs + knobs.itlMs * Math.max(0, knobs.outputTokens - 1), gone);
      if (gone.aborted) return finish(0);
      this.#ttft.observe(knobs.ttftMs / 1000);
      const body = chat ? chatCompletion(this.model, id, knobs, tools, this.#requests) : textCompletion(this.model, id, knobs);
      res.writeHead(200, { 'content-type': 'application/json' });
      await writer.write(JSON.stringify(body)); // with splitting, the tail follows in a second write
      writer.end();
      finish(200);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (path === '/v1/embeddings') {
      writer.end(JSON.stringify({ object: 'list', model: this.model, data: [{ object: 'embedding', index: 0, embedding: [0.1, -0.2, 0.3, 0.05] }], usage: { prompt_tokens: 4, total_tokens: 4 } }));
    } else if (path === '/tokenize') {
      writer.end(JSON.stringify({ count: 3, max_model_len: 8192, tokens: [1, 2, 3] }));
    } else {
      writer.end(JSON.stringify({ object: 'sim.result', path, model: this.model }));
    }
    finish(200);
  }
}

function created(): number {
  return 1_700_000_000;
}

function chatEvents(model: string, id: string, knobs: SimKnobs, tools: boolean, seed: number): string[] {
  const base = { id, object: 'chat.completion.chunk', created: created(), model };
  const chunk = (delta: unknown, finish: string | null) => sseEvent({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const events = [chunk({ role: 'assistant', content: '' }, null)];
  if (tools) {
    events.push(chunk({ tool_calls: [{ index: 0, id: `call_${seed}`, type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null));
    for (const part of fragments(toolArguments(knobs.toolArgsBytes, seed), Math.max(4, knobs.outputTokens))) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }, null));
    }
    events.push(chunk({}, 'tool_calls'));
  } else {
    for (let i = 0; i < knobs.outputTokens; i++) events.push(chunk({ content: tokenText(i) }, null));
    events.push(chunk({}, 'stop'));
  }
  return events;
}

function completionEvents(model: string, id: string, knobs: SimKnobs): string[] {
  const event = (text: string, finish: string | null) =>
    sseEvent({ id, object: 'text_completion', created: created(), model, choices: [{ index: 0, text, logprobs: null, finish_reason: finish }] });
  const events: string[] = [];
  for (let i = 0; i < knobs.outputTokens; i++) events.push(event(tokenText(i), null));
  events.push(event('', 'length'));
  return events;
}

function chatCompletion(model: string, id: string, knobs: SimKnobs, tools: boolean, seed: number): unknown {
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  const message = tools
    ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${seed}`, type: 'function', function: { name: 'get_weather', arguments: toolArguments(knobs.toolArgsBytes, seed) } }] }
    : { role: 'assistant', content: text };
  return {
    id,
    object: 'chat.completion',
    created: created(),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: tools ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 8, completion_tokens: knobs.outputTokens, total_tokens: 8 + knobs.outputTokens },
  };
}

function textCompletion(model: string, id: string, knobs: SimKnobs): unknown {
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  return { id, object: 'text_completion', created: created(), model, choices: [{ index: 0, text, logprobs: null, finish_reason: 'length' }] };
}

function vllmError(message: string, type: string, code: number): unknown {
  return { object: 'error', message, type, param: null, code };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

function remember<T>(map: Map<string, T>, key: string, value: T): void {
  if (map.size >= RECORD_LIMIT) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/** Resolves after `ms`, or at once when `signal` fires. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

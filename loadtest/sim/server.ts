/**
 * An OpenAI/vLLM look-alike engine for tests, the demo and benchmarks: chat
 * and completions (streamed and not, tool calls included), embeddings,
 * `/v1/models`, `/health`, `/metrics` in vLLM's format, a bounded number of
 * running sequences with a visible waiting queue, and faults on demand.
 * Chat and completion answers honour `max_tokens` and vLLM's `ignore_eos`
 * and report `usage` (in a last chunk when a stream asks with
 * `stream_options.include_usage`; token-budget.ts).
 * `POST /v1/responses` is a text-only Responses API with stored responses
 * and `previous_response_id` (response-store.ts), answered under the same
 * knobs, batch slots and prefix-cache models as chat.
 *
 * With `kvBlocks` > 0 it also models vLLM's automatic prefix caching and
 * prefill cost (engine-kv.ts): a block pool with pinned running sequences,
 * cached outputs, hit counters, `vllm:cache_config_info`, a first token that
 * waits for the uncached part of the prompt (`prefillTps`), and
 * `POST /reset_prefix_cache`. With `kvBlocks` 0 a cruder token-count model
 * (prefix-cache.ts) only keeps the hit counters moving, as before.
 *
 * With `loraSlots` > 0 it serves the LoRA adapters named by `loraAdapters`
 * next to its base model (engine-lora.ts): adapter slots, swaps that delay
 * the first token, `vllm:lora_requests_info`, and the adapters in
 * `/v1/models`.
 *
 * It records, per `x-request-id`, what it received and a SHA-256 of the
 * bytes it sent, so tests can prove the router changed nothing.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { TOKEN_BYTES } from './block-hash.ts';
import { chatCompletion, chatEvents, completionEvents, generatedText, offeredTools, textCompletion, type AnswerEnding } from './answers.ts';
import { SSE_DONE } from './content.ts';
import { EngineKv, type KvAdmission } from './engine-kv.ts';
import { EngineLora } from './engine-lora.ts';
import { DEFAULT_KNOBS, knobsForRequest, type SimKnobs } from './knobs.ts';
import { renderDialect, TtftHistogram, type SimMetricsDialect } from './metrics-text.ts';
import { listenOn, readAll } from './node-http.ts';
import { PrefixCache, promptBlocks } from './prefix-cache.ts';
import { ResponseWriter } from './response-writer.ts';
import { seededRng } from './random.ts';
import { responseEvents, responseObject, type ResponseFacts } from './response-answers.ts';
import { DEFAULT_STORED_RESPONSES, ResponseStore, type ResponseTurn } from './response-store.ts';
import { SeqScheduler } from './scheduler.ts';
import { answerLength, promptTokens, usageOf, wantsStreamUsage } from './token-budget.ts';
import type { SimTracing } from './otlp-spans.ts';

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
  /** With the KV-block model on (chat and completions): the prompt's pseudo-tokens, how many were cached, and the prefill delay (ms, FIFO wait included). */
  readonly kv?: { readonly promptTokens: number; readonly cachedTokens: number; readonly prefillMs: number };
}

/** Options of one simulated engine. */
export interface SimOptions {
  readonly model: string;
  readonly knobs?: Partial<SimKnobs>;
  /** Seeds the split positions and fail decisions. */
  readonly seed?: number;
  /** Monotonic clock (ms) of the KV-block model and its prefill lane; `performance.now` by default. */
  readonly clock?: () => number;
  /** Responses API responses kept for `previous_response_id` (≥ 1); the oldest stored is dropped first. */
  readonly storedResponses?: number;
  /** Whose metric names `/metrics` serves (`vllm` by default); `none` answers it 404. */
  readonly metricsDialect?: SimMetricsDialect;
  /**
   * Keep, per `x-request-id`, what arrived and a SHA-256 of what was sent,
   * for tests to read (default true). Benchmark engines turn it off: the
   * hashes and copies tripled the simulator's CPU per request (48 → 129 µs
   * under `ab -c 64`) for traffic carrying the header, which switchyard always
   * sends and nginx does not, so the engine sharing the load generator's core
   * slowed down for switchyard alone.
   */
  readonly record?: boolean;
  /** An OTLP span per inference request, as vLLM's `--otlp-traces-endpoint` (loadtest/sim/otlp-spans.ts); none by default. */
  readonly tracing?: Pick<SimTracing, 'start'>;
}

/** The Responses API route. */
const RESPONSES_PATH = '/v1/responses';

const RECORD_LIMIT = 20_000;
/** Engine-side TTFT samples kept. */
const ENGINE_TTFT_SAMPLES = 200_000;

/** One simulated engine; listen on loopback with {@link EngineSimulator.listen}. */
export class EngineSimulator {
  readonly model: string;
  readonly knobs: SimKnobs;
  readonly metricsDialect: SimMetricsDialect;
  readonly scheduler = new SeqScheduler();
  /** Inference requests received per `x-session-id`, to tell which engine served which conversation. */
  readonly sessions = new Map<string, number>();
  /** Responses API responses this engine stored, and so can continue. */
  readonly responses: ResponseStore;
  readonly #server: Server;
  readonly #received = new Map<string, ReceivedRecord>();
  readonly #sent = new Map<string, SentRecord>();
  readonly #live = new Map<string, ResponseWriter>();
  readonly #ttft = new TtftHistogram();
  readonly #prefixCache = new PrefixCache();
  /** The KV-block model; undefined when `kvBlocks` is 0. */
  readonly #kv: EngineKv | undefined;
  /** The LoRA adapters and their slots; undefined when `loraSlots` is 0 (LoRA off). */
  readonly lora: EngineLora | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #record: boolean;
  readonly #tracing: Pick<SimTracing, 'start'> | undefined;
  #succeeded = 0;
  #requests = 0;
  /** Engine-side times to first token (ms), from the whole request received to the first token, queue wait included; the first ENGINE_TTFT_SAMPLES kept. */
  readonly #engineTtftMs: number[] = [];
  #port = 0;

  constructor(options: SimOptions) {
    this.model = options.model;
    this.knobs = { ...DEFAULT_KNOBS, ...options.knobs };
    this.metricsDialect = options.metricsDialect ?? 'vllm';
    this.#record = options.record ?? true;
    this.#tracing = options.tracing;
    this.#random = seededRng(options.seed ?? 1);
    this.responses = new ResponseStore(options.storedResponses ?? DEFAULT_STORED_RESPONSES);
    const clock = options.clock ?? (() => performance.now());
    this.#kv = this.knobs.kvBlocks > 0 ? new EngineKv({ model: this.model, blocks: this.knobs.kvBlocks, blockTokens: this.knobs.blockTokens, clock }) : undefined;
    const { loraSlots, loraLoadMs, loraAdapters } = this.knobs;
    this.lora = loraSlots > 0 ? new EngineLora({ model: this.model, slots: loraSlots, loadMs: loraLoadMs, adapters: loraAdapters }) : undefined;
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

  /**
   * Engine-side times to first token (ms) of the chat and completion answers
   * since start or the last {@link resetEngineTtft}: from the engine having
   * the whole request to its first token, its own queue wait included (what
   * the engine's clients feel of its queue, which a router's client-side
   * numbers mix with the router's queue).
   */
  get engineTtftMs(): readonly number[] {
    return this.#engineTtftMs;
  }

  resetEngineTtft(): void {
    this.#engineTtftMs.length = 0;
  }

  #observeEngineTtft(ms: number): void {
    if (this.#engineTtftMs.length < ENGINE_TTFT_SAMPLES) this.#engineTtftMs.push(ms);
  }

  /** Inference (POST) requests received since start; `/metrics` scrapes and `/v1/models` are not counted. */
  get requests(): number {
    return this.#requests;
  }

  /** Starts listening; resolves with the bound port. */
  async listen(host = '127.0.0.1', port = 0): Promise<number> {
    this.#port = await listenOn(this.#server, host, port);
    return this.#port;
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

  /**
   * Prompt tokens of a chat or completion body (parsed JSON) this engine
   * holds in its prefix cache now: what it would count as hits if it
   * scheduled the request at once. Pure and synchronous (no counter, no LRU
   * recency changes); 0 with the KV-block model off or for another model.
   */
  cachedPrefixTokens(payload: Readonly<Record<string, unknown>>): number {
    return this.#kv?.cachedTokens(payload) ?? 0;
  }

  /** Drops every cached block no running request holds, as `POST /reset_prefix_cache` does. */
  resetPrefixCache(): void {
    this.#kv?.reset();
    this.#prefixCache.reset();
  }

  /** A float in [0, 1) from a small deterministic generator seeded per engine. */
  readonly #random: () => number;

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] as string;
    // Inference requests only: scrapes, model listings and cache resets must not look like routed traffic.
    if (req.method === 'POST' && path !== '/reset_prefix_cache') {
      this.#requests++;
      const sessionKey = req.headers['x-session-id'];
      if (typeof sessionKey === 'string') this.sessions.set(sessionKey, (this.sessions.get(sessionKey) ?? 0) + 1);
    }
    const body = await readAll(req);
    const acceptedAt = performance.now();
    const requestId = typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : undefined;
    if (requestId !== undefined && this.#record) {
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
    if (path === '/reset_prefix_cache') {
      // vLLM answers 200 with an empty body.
      this.resetPrefixCache();
      res.writeHead(200, { 'content-length': 0 }).end();
      return;
    }
    const knobs = knobsForRequest(this.knobs, req.headers);
    let payload: Record<string, unknown> = {};
    const isJson = !(req.headers['content-type'] ?? '').startsWith('multipart/');
    if (isJson) {
      try {
        payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return sendJson(res, 400, vllmError('Invalid JSON body', 'BadRequestError', 400));
      }
      if (payload['model'] !== this.model && this.lora?.serves(payload['model']) !== true) {
        return sendJson(res, 404, vllmError(`The model \`${String(payload['model'])}\` does not exist.`, 'NotFoundError', 404));
      }
    }
    // vLLM looks the previous response up before scheduling: an unknown one never takes a batch slot.
    let response: ResponseTurn | undefined;
    if (path === RESPONSES_PATH) {
      const opening = this.responses.open(payload);
      if (!opening.ok) return sendJson(res, opening.status, opening.error);
      response = opening.turn;
    }
    if (this.#tracing !== undefined) {
      const span = this.#tracing.start(req.headers, acceptedAt, requestId);
      res.once('close', () => span.end(res.statusCode));
    }
    if (knobs.stall) return; // hold the request open forever (until the client or close() ends it)
    if (knobs.failRate > 0 && this.#random() < knobs.failRate) {
      return sendJson(res, 500, vllmError('Simulated engine failure', 'InternalServerError', 500));
    }
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const adapter = this.lora?.admission(payload['model']);
    if (!(await this.scheduler.acquire(knobs.maxSeqs, gone.signal, adapter))) return;
    try {
      if (knobs.slowHeadersMs > 0) await sleep(knobs.slowHeadersMs, gone.signal);
      if (!gone.signal.aborted) await this.#generate(path, payload, knobs, res, requestId, gone.signal, acceptedAt, response, adapter?.loadMs ?? 0);
    } finally {
      this.scheduler.release(knobs.maxSeqs, adapter);
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
          data: [{ id: this.model, object: 'model', created: 0, owned_by: 'vllm', root: this.model, parent: null, max_model_len: 8192 }, ...(this.lora?.modelCards() ?? [])],
        });
      case '/metrics':
        if (this.knobs.metricsHang) return;
        if (this.metricsDialect === 'none') return sendJson(res, 404, vllmError('Not Found', 'NotFoundError', 404));
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        if (this.knobs.metricsGarbage) {
          res.end('<html><body>502 Bad Gateway</body></html>\n\x00\xff vllm:num_requests_waiting{ 1');
          return;
        }
        res.end(
          renderDialect(this.metricsDialect, {
            model: this.model,
            running: this.scheduler.running,
            waiting: this.scheduler.waiting,
            kvCacheUsage: this.#kv?.usage ?? Math.min(1, (this.knobs.kvFullBatch * this.scheduler.running) / Math.max(1, this.knobs.maxSeqs)),
            ttft: this.#ttft,
            requestsSucceeded: this.#succeeded,
            prefixCacheQueries: this.#kv?.queriedTokens ?? this.#prefixCache.queriedTokens,
            prefixCacheHits: this.#kv?.hitTokens ?? this.#prefixCache.hitTokens,
            ...(this.#kv === undefined ? {} : { cacheConfig: { blockSize: this.#kv.blockTokens, numGpuBlocks: this.#kv.capacity } }),
            ...(this.lora === undefined ? {} : { lora: this.lora.gauges() }),
          }),
        );
        return;
      default:
        return sendJson(res, 404, vllmError('Not Found', 'NotFoundError', 404));
    }
  }

  /** Writes the response; stops early (freeing the batch slot) once `gone` fires. `response`: the opened Responses API request; `loadMs`: the LoRA adapter's load, before the first token. */
  async #generate(
    path: string,
    payload: Record<string, unknown>,
    knobs: SimKnobs,
    res: ServerResponse,
    requestId: string | undefined,
    gone: AbortSignal,
    acceptedAt: number,
    response: ResponseTurn | undefined,
    loadMs: number,
  ): Promise<void> {
    // The request id names the answer (its `id`) either way; only the records are optional.
    const recordedId = this.#record ? requestId : undefined;
    const writer = new ResponseWriter(res, { split: knobs.split, dieAfterChunks: knobs.dieAfterChunks, random: this.#random, hash: recordedId !== undefined });
    if (recordedId !== undefined) this.#live.set(recordedId, writer);
    res.once('close', () => {
      if (recordedId !== undefined) this.#live.delete(recordedId);
    });
    const started = performance.now();
    // vLLM names the adapter, not the base model, in an adapter's answers.
    const model = this.lora?.serves(payload['model']) === true ? payload['model'] : this.model;
    let admission: KvAdmission | undefined;
    const finish = (status: number) => {
      if (!writer.dead) this.#succeeded++;
      if (recordedId === undefined) return;
      const record: SentRecord = { status, sha256: writer.digest(), bytes: writer.bytes, complete: !writer.dead };
      const kv = admission === undefined ? undefined : { promptTokens: admission.promptTokens, cachedTokens: admission.cachedTokens, prefillMs: admission.prefillMs };
      remember(this.#sent, recordedId, kv === undefined ? record : { ...record, kv });
    };
    if (path === '/v1/chat/completions' || path === '/v1/completions' || response !== undefined) {
      const chat = path !== '/v1/completions';
      const tools = path === '/v1/chat/completions' ? offeredTools(payload) : undefined;
      // A Responses API prompt is its chat messages, history included: the template and caches see a chat body.
      const prompt = response?.prompt ?? payload;
      if (this.#kv === undefined) this.#prefixCache.lookup(promptBlocks(prompt));
      // max_tokens and ignore_eos set the answer's length (chat and completions; the Responses API keeps the knob's).
      const length = response === undefined ? answerLength(knobs.outputTokens, payload) : { tokens: knobs.outputTokens, cut: false };
      const answerKnobs = length.tokens === knobs.outputTokens ? knobs : { ...knobs, outputTokens: length.tokens };
      // Room for the output is reserved up front; its size hardly depends on the seed.
      const outputTokens = this.#kv === undefined ? 0 : Math.ceil(Buffer.byteLength(generatedText(answerKnobs, tools, this.#requests)) / TOKEN_BYTES);
      admission = this.#kv?.admit(prompt, knobs.prefillTps, outputTokens);
      let output: string | undefined;
      try {
        const answer = response === undefined ? undefined : responseFacts(model, response, admission);
        const stream = response?.stream ?? payload['stream'] === true;
        // Counted only when reported: a non-streamed answer always carries usage, a stream when asked for it.
        const usage = response === undefined && (!stream || wantsStreamUsage(payload)) ? usageOf(admission?.promptTokens ?? promptTokens(payload), length.tokens) : undefined;
        const turn: Turn = { model, chat, tools, stream, id: `${chat ? 'chatcmpl' : 'cmpl'}-${requestId ?? this.#requests}`, acceptedAt, started, prefillMs: (admission?.prefillMs ?? 0) + loadMs, response: answer, ending: { cut: length.cut, usage } };
        output = await this.#complete(res, writer, turn, answerKnobs, gone, finish);
      } finally {
        if (admission !== undefined) this.#kv?.finish(admission, output);
      }
      if (response !== undefined && output !== undefined) this.responses.save(response, output);
      return;
    }
    if (loadMs > 0) {
      await sleep(loadMs, gone);
      if (gone.aborted) return finish(0);
    }
    const answer =
      path === '/v1/embeddings'
        ? { object: 'list', model, data: [{ object: 'embedding', index: 0, embedding: [0.1, -0.2, 0.3, 0.05] }], usage: { prompt_tokens: 4, total_tokens: 4 } }
        : path === '/tokenize'
          ? { count: 3, max_model_len: 8192, tokens: [1, 2, 3] }
          : { object: 'sim.result', path, model };
    const text = JSON.stringify(answer);
    res.writeHead(200, jsonHeaders(text));
    writer.end(text);
    finish(200);
  }

  /**
   * A chat or completion answer: the first token after the prefill delay
   * plus `ttftMs`. Resolves with the text generated (what a client resends as
   * the assistant's turn), or undefined when the answer did not finish.
   */
  async #complete(res: ServerResponse, writer: ResponseWriter, turn: Turn, knobs: SimKnobs, gone: AbortSignal, finish: (status: number) => void): Promise<string | undefined> {
    const { model, chat, tools, id, started, prefillMs, ending } = turn;
    if (turn.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      const streamed = turn.response === undefined ? undefined : responseEvents(turn.response, knobs);
      // vLLM sends response.created (carrying the id) before the first token.
      if (streamed !== undefined) await writer.write(streamed.head);
      await sleep(prefillMs + knobs.ttftMs, gone);
      this.#ttft.observe((performance.now() - started) / 1000);
      this.#observeEngineTtft(performance.now() - turn.acceptedAt);
      const seed = this.#requests;
      const events = streamed?.steps ?? (chat ? chatEvents(model, id, knobs, tools, seed, ending) : completionEvents(model, id, knobs, ending));
      for (let i = 0; i < events.length && !writer.dead; i++) {
        if (i > 0 && knobs.itlMs > 0) await sleep(knobs.itlMs, gone);
        await writer.write(events[i] as string);
      }
      // A Responses API stream ends with response.completed, no [DONE].
      writer.end(streamed === undefined ? SSE_DONE : '');
      finish(200);
      return writer.dead ? undefined : generatedText(knobs, tools, seed);
    }
    await sleep(prefillMs + knobs.ttftMs + knobs.itlMs * Math.max(0, knobs.outputTokens - 1), gone);
    if (gone.aborted) {
      finish(0);
      return undefined;
    }
    this.#ttft.observe((prefillMs + knobs.ttftMs) / 1000);
    this.#observeEngineTtft(started - turn.acceptedAt + prefillMs + knobs.ttftMs);
    const seed = this.#requests;
    const body = turn.response !== undefined ? responseObject(turn.response, knobs, 'completed') : chat ? chatCompletion(model, id, knobs, tools, seed, ending) : textCompletion(model, id, knobs, ending);
    const text = JSON.stringify(body);
    res.writeHead(200, jsonHeaders(text));
    await writer.write(text); // with splitting, the tail follows in a second write
    writer.end();
    finish(200);
    return writer.dead ? undefined : generatedText(knobs, tools, seed);
  }
}

/**
 * Headers of a whole JSON answer. vLLM's carry Content-Length (its server's
 * JSON responses are sized), and HTTP/1.0 keep-alive clients such as `ab -k`
 * need it: without it every answer closed its connection.
 */
function jsonHeaders(text: string): Record<string, string | number> {
  return { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
}

/** What {@link EngineSimulator} needs to answer one chat or completion request. */
interface Turn {
  /** The model the answer names: the base model, or the adapter asked for. */
  readonly model: string;
  readonly chat: boolean;
  /** The offered tools' names when the answer is tool calls. */
  readonly tools: readonly string[] | undefined;
  readonly stream: boolean;
  /** The response id. */
  readonly id: string;
  /** performance.now() when the engine had the whole request, before any wait for a batch slot. */
  readonly acceptedAt: number;
  /** performance.now() when generation began (TTFT is observed from here). */
  readonly started: number;
  /** Delay before the first token (ms), on top of ttftMs: the prefill's (KV-block model) plus the LoRA adapter's load. */
  readonly prefillMs: number;
  /** A Responses API answer instead of chat or completion. */
  readonly response?: ResponseFacts | undefined;
  /** Chat and completions: the finish reason and the usage reported. */
  readonly ending?: AnswerEnding;
}

/** What a Responses API answer reports: the prompt's tokens from the KV-block model, else estimated from its messages. */
function responseFacts(model: string, turn: ResponseTurn, admission: KvAdmission | undefined): ResponseFacts {
  const inputTokens = admission?.promptTokens ?? Math.ceil(Buffer.byteLength(JSON.stringify(turn.messages)) / TOKEN_BYTES);
  const { id, messageId, previousResponseId, instructions } = turn;
  return { id, messageId, model, previousResponseId, instructions, inputTokens, cachedTokens: admission?.cachedTokens ?? 0 };
}

function vllmError(message: string, type: string, code: number): unknown {
  return { object: 'error', message, type, param: null, code };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
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

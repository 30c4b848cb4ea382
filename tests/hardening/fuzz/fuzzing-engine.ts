/**
 * An engine whose every answer is written byte by byte from a fast-check
 * generated script: to inference requests, to `GET /metrics` and to
 * `GET /v1/models`. It is an in-process fake on purpose: a real engine (or
 * the simulator) cannot be made to answer with a lying Content-Length, a
 * broken chunk, a header of raw UTF-8, a 103 before its answer, NaN gauges or
 * a socket cut in the middle of an SSE event on demand, and those are the
 * answers a router meets from misbehaving pods, sidecars and proxies.
 *
 * Requests are parsed by node:http; answers bypass it and go straight to the
 * socket, which is closed after each answer (the HTTP server would otherwise
 * hold the next request on that connection behind the answer it never saw).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import fc from 'fast-check';

/** How the answer body is framed on the wire. */
export type Framing = 'content-length' | 'chunked' | 'close-delimited' | 'length-too-long' | 'length-too-short' | 'length-and-chunked' | 'bad-chunk' | 'two-lengths';

/** A body, described small enough to print in a counterexample. */
export type Payload =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: readonly number[] }
  | { readonly kind: 'repeat'; readonly unit: string; readonly times: number }
  | { readonly kind: 'sse'; readonly contents: readonly string[]; readonly done: boolean }
  | { readonly kind: 'bad-utf8'; readonly text: string; readonly at: number; readonly bad: readonly number[] };

/** One answer, from the status line to the last byte (or the cut). */
export interface WireAnswer {
  /** Accept and never answer (bounded by the router's timeouts). */
  readonly hang: boolean;
  /** Destroy the connection at once, nothing written. */
  readonly reset: boolean;
  readonly statusLine: 'normal' | 'no-reason' | 'http10' | 'garbage' | 'bare-lf';
  /** A `103 Early Hints` before the final answer. */
  readonly interim: boolean;
  readonly status: number;
  readonly contentType: string | null;
  /** More headers, as name and value bytes (values may be raw UTF-8, obs-text or control characters). */
  readonly headers: readonly (readonly [string, readonly number[]])[];
  readonly payload: Payload;
  readonly framing: Framing;
  /** Destroy the socket after this share [0, 1) of the framed body; null: send it all. */
  readonly cutAt: number | null;
  /** Write the answer in this many pieces, `gapMs` apart (a slow trickle, bounded). */
  readonly pieces: number;
  readonly gapMs: number;
  /** Leave out `Connection: close` (the socket is closed after the answer all the same). */
  readonly keepAlive: boolean;
}

/** What the client of the router may see for a forwarded request, given the engine's answer. */
export interface Expectation {
  /** The exact body a complete pass-through must carry; undefined when framing or status make it unpredictable. */
  readonly exact: Buffer | undefined;
  /** The answer may legitimately fail: a router error (502/504) or a cut pass-through is then fine. */
  readonly mayFail: boolean;
  /** The whole decoded payload (a cut pass-through must be a prefix of it). */
  readonly payload: Buffer;
}

/** One answer the engine gave to an inference request. */
export interface AnswerRecord {
  readonly answer: WireAnswer;
  readonly expect: Expectation;
}

/** The bytes of `payload`. */
export function renderPayload(payload: Payload): Buffer {
  switch (payload.kind) {
    case 'text':
      return Buffer.from(payload.text, 'utf8');
    case 'bytes':
      return Buffer.from(payload.bytes);
    case 'repeat':
      return Buffer.from(payload.unit.repeat(payload.times), 'utf8');
    case 'sse': {
      const events = payload.contents.map((content, i) => `data: ${JSON.stringify({ id: 'fuzz', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: i === payload.contents.length - 1 ? 'stop' : null }] })}\n\n`);
      return Buffer.from(events.join('') + (payload.done ? 'data: [DONE]\n\n' : ''), 'utf8');
    }
    case 'bad-utf8': {
      const text = Buffer.from(payload.text, 'utf8');
      const at = Math.min(text.length, payload.at);
      return Buffer.concat([text.subarray(0, at), Buffer.from(payload.bad), text.subarray(at)]);
    }
  }
}

const REASONS: Readonly<Record<number, string>> = { 200: 'OK', 404: 'Not Found', 500: 'Internal Server Error' };

/** The wire bytes of `answer`, where to cut them, and what the router's client may see. */
export function renderAnswer(answer: WireAnswer): { head: Buffer; body: Buffer; cut: number | undefined; expect: Expectation } {
  const payload = renderPayload(answer.payload);
  const eol = answer.statusLine === 'bare-lf' ? '\n' : '\r\n';
  const version = answer.statusLine === 'http10' ? 'HTTP/1.0' : 'HTTP/1.1';
  const reason = answer.statusLine === 'no-reason' ? '' : (REASONS[answer.status] ?? 'Fuzz');
  const statusLine = answer.statusLine === 'garbage' ? `HTTP/1.1 2x0 OK${eol}` : `${version} ${answer.status}${reason === '' ? '' : ' ' + reason}${eol}`;
  const lines: Buffer[] = [];
  if (answer.interim) lines.push(Buffer.from(`HTTP/1.1 103 Early Hints${eol}link: </style.css>; rel=preload${eol}${eol}`, 'latin1'));
  lines.push(Buffer.from(statusLine, 'latin1'));
  const header = (name: string, value: string | readonly number[]) =>
    lines.push(Buffer.concat([Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'latin1') : Buffer.from(value), Buffer.from(eol, 'latin1')]));
  if (answer.contentType !== null) header('content-type', answer.contentType);
  for (const [name, value] of answer.headers) header(name, value);
  if (!answer.keepAlive) header('connection', 'close');
  let body: Buffer;
  let exactBody: Buffer | undefined = payload;
  switch (answer.framing) {
    case 'content-length':
      header('content-length', String(payload.length));
      body = payload;
      break;
    case 'chunked':
      header('transfer-encoding', 'chunked');
      body = chunked(payload, false);
      break;
    case 'close-delimited':
      body = payload;
      break;
    case 'length-too-long':
      header('content-length', String(payload.length + 10));
      body = payload;
      exactBody = undefined;
      break;
    case 'length-too-short': {
      const declared = Math.floor(payload.length / 2);
      header('content-length', String(declared));
      body = payload;
      exactBody = payload.subarray(0, declared);
      break;
    }
    case 'length-and-chunked':
      header('content-length', String(payload.length));
      header('transfer-encoding', 'chunked');
      body = chunked(payload, false);
      exactBody = undefined;
      break;
    case 'bad-chunk':
      header('transfer-encoding', 'chunked');
      body = chunked(payload, true);
      exactBody = undefined;
      break;
    case 'two-lengths':
      header('content-length', String(payload.length));
      header('content-length', String(payload.length + 1));
      body = payload;
      exactBody = undefined;
      break;
  }
  lines.push(Buffer.from(eol, 'latin1'));
  const cut = answer.cutAt === null ? undefined : Math.floor(answer.cutAt * body.length);
  const oddStatus = answer.status < 200 || answer.status === 204 || answer.status === 304 || answer.status > 599;
  // Past undici's 16 KiB header limit the router must refuse the answer (502), within it pass it on.
  const oddHead =
    answer.statusLine !== 'normal' ||
    answer.interim ||
    answer.headers.some(([, value]) => value.length > 8_000 || value.some((byte) => byte < 0x20 || byte > 0x7e));
  const mayFail =
    answer.hang || answer.reset || cut !== undefined || oddStatus || oddHead || exactBody !== payload || (answer.framing === 'close-delimited' && answer.keepAlive);
  return {
    head: Buffer.concat(lines),
    body,
    cut,
    expect: { exact: oddStatus || answer.statusLine === 'garbage' ? undefined : exactBody, mayFail, payload },
  };
}

function chunked(payload: Buffer, broken: boolean): Buffer {
  const parts: Buffer[] = [];
  const size = Math.max(1, Math.ceil(payload.length / 3));
  for (let at = 0; at < payload.length; at += size) {
    const piece = payload.subarray(at, at + size);
    parts.push(Buffer.from(`${broken && at > 0 ? 'zz' : piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n', 'latin1'));
  }
  parts.push(Buffer.from('0\r\n\r\n', 'latin1'));
  return Buffer.concat(parts);
}

// ---- arbitraries ------------------------------------------------------------

const statusArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant(200) },
  { weight: 6, arbitrary: fc.constantFrom(201, 202, 206, 301, 302, 307, 400, 401, 403, 404, 408, 413, 422, 429, 500, 502, 503, 504) },
  { weight: 1, arbitrary: fc.constantFrom(204, 304, 101, 103, 600, 999) },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 599 }) },
);

const asciiBytes = (text: string) => [...Buffer.from(text, 'latin1')];
const headerValueArb = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((s) => asciiBytes(s.replace(/[\r\n]/g, ''))) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => [...Buffer.from(s.replace(/[\r\n]/g, ''), 'utf8')]) }, // raw UTF-8
  { weight: 1, arbitrary: fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 8 }) }, // obs-text
  { weight: 1, arbitrary: fc.constantFrom([0x61, 0x01, 0x62], [0x7f], [0x00], [0x61, 0x09, 0x62]) }, // control characters
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => asciiBytes('v'.repeat(n))) }, // long, past undici's header limit at the top
);
const headerNameArb = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/).filter((name) => !['content-length', 'transfer-encoding', 'connection', 'content-type'].includes(name)),
  fc.constantFrom('x-request-id', 'keep-alive', 'upgrade', 'proxy-authenticate', 'trailer', 'set-cookie', 'content-encoding', 'x-forwarded-for', 'retry-after', 'www-authenticate', 'server', 'date'),
);
const headersArb = fc.array(fc.tuple(headerNameArb, headerValueArb), { maxLength: 4 });

const sseArb: fc.Arbitrary<Payload> = fc.record({
  kind: fc.constant('sse' as const),
  contents: fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { minLength: 1, maxLength: 8 }),
  done: fc.boolean(),
});

function answerArb(payloadArb: fc.Arbitrary<Payload>, contentTypeArb: fc.Arbitrary<string | null>, sane: number): fc.Arbitrary<WireAnswer> {
  const plain = fc.record({
    hang: fc.constant(false),
    reset: fc.constant(false),
    statusLine: fc.constant('normal' as const),
    interim: fc.constant(false),
    status: fc.constant(200),
    contentType: contentTypeArb,
    headers: fc.constant([]),
    payload: payloadArb,
    framing: fc.constantFrom<Framing>('content-length', 'chunked'),
    cutAt: fc.constant(null),
    pieces: fc.constant(1),
    gapMs: fc.constant(0),
    keepAlive: fc.constant(false),
  });
  const odd = fc.record({
    hang: fc.oneof({ weight: 30, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    reset: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    statusLine: fc.oneof(
      { weight: 12, arbitrary: fc.constant('normal' as const) },
      { weight: 1, arbitrary: fc.constantFrom('no-reason' as const, 'http10' as const, 'garbage' as const, 'bare-lf' as const) },
    ),
    interim: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    status: statusArb,
    contentType: contentTypeArb,
    headers: headersArb,
    payload: payloadArb,
    framing: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<Framing>('content-length', 'chunked', 'close-delimited') },
      { weight: 2, arbitrary: fc.constantFrom<Framing>('length-too-long', 'length-too-short', 'length-and-chunked', 'bad-chunk', 'two-lengths') },
    ),
    cutAt: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.double({ min: 0, max: 0.99, noNaN: true }) }),
    pieces: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 8 }) }),
    gapMs: fc.integer({ min: 0, max: 50 }), // at most 8 x 50 ms: well inside the router's timeouts in these runs
    keepAlive: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  });
  return fc.oneof({ weight: sane, arbitrary: plain }, { weight: 10 - sane, arbitrary: odd });
}

const jsonText = (value: unknown) => ({ kind: 'text' as const, text: JSON.stringify(value) });

/** Answers to inference requests: mostly well formed chat answers and streams, the rest anything. */
export const inferenceAnswerArb: fc.Arbitrary<WireAnswer> = answerArb(
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }).map((content) => jsonText({ id: 'fuzz', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] })) },
    { weight: 4, arbitrary: sseArb },
    { weight: 1, arbitrary: fc.constant({ kind: 'text' as const, text: '' }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(jsonText) },
    { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }).map((bytes) => ({ kind: 'bytes' as const, bytes })) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('bad-utf8' as const), text: fc.string({ unit: 'grapheme', maxLength: 30 }), at: fc.nat(40), bad: fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82]) }) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 40_000 }).map((times) => ({ kind: 'repeat' as const, unit: 'data: {"x":"é€"}\n\n', times })) },
  ),
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('application/json', 'text/event-stream', 'text/event-stream; charset=utf-8') },
    { weight: 1, arbitrary: fc.constantFrom(null, 'text/html', 'application/octet-stream', 'text/event-stream;;;', '') },
  ),
  6,
);

const GAUGES = ['vllm:num_requests_waiting', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'vllm:num_requests_swapped'];
const saneValue = fc.oneof(fc.integer({ min: 0, max: 2 }).map(String), fc.double({ min: 0, max: 0.5, noNaN: true }).map(String));
const oddValue = fc.oneof(
  fc.constantFrom('NaN', '+Inf', '-Inf', 'nan', 'inf', '-1', '-0', '1e308', '1e309', '-1e309', '9'.repeat(400), '0x1F', '', ' 1', '1 2', '1_000', '٣'),
  fc.double().map(String),
  fc.integer().map(String),
);

function metricsArb(model: string): fc.Arbitrary<Payload> {
  const labels = fc.oneof(
    { weight: 6, arbitrary: fc.constant(`{model_name="${model}"}`) },
    { weight: 1, arbitrary: fc.constantFrom('', '{}', '{model_name="other"}', `{engine="0",model_name="${model}"}`, `{model_name="${model}",}`, '{model_name=}', '{', '{model_name="a\\"b\\\\c\\n"}', `{model_name="${model}"} {x="y"}`) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => `{model_name=${JSON.stringify(s)}}`) },
  );
  const sample = fc
    .tuple(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...GAUGES) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,20}$/) }), labels, fc.oneof({ weight: 3, arbitrary: saneValue }, { weight: 1, arbitrary: oddValue }), fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('1700000000000', 'abc', '-1') }))
    .map(([name, label, value, ts]) => `${name}${label} ${value}${ts === null ? '' : ' ' + ts}`);
  const junk = fc.oneof(
    fc.constantFrom('# HELP vllm:num_requests_waiting Number of requests waiting.', '# TYPE vllm:num_requests_waiting gauge', '# TYPE vllm:num_requests_waiting counter', '#', '# EOF', ''),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
  );
  const sane = fc
    .tuple(saneValue, saneValue, fc.double({ min: 0, max: 0.5, noNaN: true }))
    .map(([waiting, running, kv]) => ({ kind: 'text' as const, text: `vllm:num_requests_waiting{model_name="${model}"} ${waiting}\nvllm:num_requests_running{model_name="${model}"} ${running}\nvllm:kv_cache_usage_perc{model_name="${model}"} ${kv}\n` }));
  const odd = fc
    .tuple(fc.array(fc.oneof({ weight: 3, arbitrary: sample }, { weight: 1, arbitrary: junk }), { minLength: 1, maxLength: 16 }), fc.boolean(), fc.boolean(), fc.nat(3))
    .map(([lines, crlf, trailingNewline, duplicate]) => {
      const all = [...lines, ...lines.slice(0, duplicate)]; // duplicate series
      return { kind: 'text' as const, text: all.join(crlf ? '\r\n' : '\n') + (trailingNewline ? '\n' : '') };
    });
  return fc.oneof(
    { weight: 5, arbitrary: sane },
    { weight: 4, arbitrary: odd },
    { weight: 1, arbitrary: fc.constantFrom<Payload>({ kind: 'text', text: '' }, { kind: 'text', text: '<html><body>502 Bad Gateway</body></html>' }, { kind: 'bad-utf8', text: `vllm:num_requests_waiting{model_name="${model}"} 1\n`, at: 30, bad: [0xff, 0xfe] }) },
    { weight: 1, arbitrary: fc.integer({ min: 1_500, max: 6_000 }).map((times) => ({ kind: 'repeat' as const, unit: `vllm:num_requests_running{model_name="${model}"} 1\n`, times })) }, // over scrape.maxBytes (64 KiB in these runs)
    { weight: 1, arbitrary: fc.integer({ min: 70_000, max: 200_000 }).map((times) => ({ kind: 'repeat' as const, unit: 'x', times })) }, // one line past every cap
  );
}

function modelsArb(model: string): fc.Arbitrary<Payload> {
  const list = (ids: readonly unknown[]) => jsonText({ object: 'list', data: ids.map((id) => ({ id, object: 'model', owned_by: 'vllm' })) });
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant(list([model])) },
    // A valid list without the model unlists it until the next refresh: rare, or the run would mostly see 404s.
    { weight: 1, arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', model)), { maxLength: 4 }).map(list) },
    { weight: 1, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }).map(list) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(jsonText) },
    { weight: 1, arbitrary: fc.constantFrom<Payload>({ kind: 'text', text: '' }, { kind: 'text', text: '{"data":' }, { kind: 'bad-utf8', text: `{"object":"list","data":[{"id":"${model}"}]}`, at: 25, bad: [0xc0, 0x80] }) },
    { weight: 1, arbitrary: fc.constant<Payload>({ kind: 'repeat', unit: `{"id":"${model}"},`, times: 80_000 }) }, // over the 1 MiB cap of a model list
  );
}

/** Answers to `GET /metrics` (vLLM's exposition, odd values, junk, oversized). */
export const metricsAnswerArb = (model: string): fc.Arbitrary<WireAnswer> =>
  answerArb(metricsArb(model), fc.constantFrom('text/plain; version=0.0.4; charset=utf-8', 'application/openmetrics-text', 'text/html', null), 5);

/** Answers to `GET /v1/models` (mostly the right list; broken ones keep the last known models). */
export const modelsAnswerArb = (model: string): fc.Arbitrary<WireAnswer> => answerArb(modelsArb(model), fc.constantFrom('application/json', 'text/plain', null), 7);

/** A well-formed answer (used before the script is set, and for unexpected requests). */
export function cleanAnswer(payload: Payload, contentType = 'application/json'): WireAnswer {
  return { hang: false, reset: false, statusLine: 'normal', interim: false, status: 200, contentType, headers: [], payload, framing: 'content-length', cutAt: null, pieces: 1, gapMs: 0, keepAlive: false };
}

// ---- the engine -------------------------------------------------------------

/** The scripted engine: several listeners sharing one script (so the router has a retry target). */
export class FuzzingEngine {
  readonly model: string;
  /** Inference (POST) requests received, retries included. */
  hits = 0;
  /** Answers given per request id (a retry adds a second). */
  readonly answered = new Map<string, AnswerRecord[]>();
  readonly #scripts = new Map<string, readonly WireAnswer[]>();
  #metrics: readonly WireAnswer[];
  #models: readonly WireAnswer[];
  #scrapes = 0;
  #modelProbes = 0;
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  urls: string[] = [];

  constructor(model: string, listeners: number) {
    this.model = model;
    this.#metrics = [cleanAnswer({ kind: 'text', text: `vllm:num_requests_waiting{model_name="${model}"} 0\n` }, 'text/plain')];
    this.#models = [cleanAnswer(jsonText({ object: 'list', data: [{ id: model, object: 'model' }] }))];
    for (let i = 0; i < listeners; i++) {
      const server = createServer((req) => this.#onRequest(req));
      server.on('connection', (socket: Socket) => {
        this.#sockets.add(socket);
        socket.on('error', () => {}); // the router may reset a connection we are still writing to
        socket.once('close', () => this.#sockets.delete(socket));
      });
      server.on('clientError', (_err, socket) => socket.destroy());
      this.#servers.push(server);
    }
  }

  /** Scrapes and model probes answered so far. */
  get scrapes(): { metrics: number; models: number } {
    return { metrics: this.#scrapes, models: this.#modelProbes };
  }

  async listen(): Promise<void> {
    for (const server of this.#servers) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.urls = this.#servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** The answers for request `id`: the first to the first attempt, the next to a retry. */
  script(id: string, answers: readonly WireAnswer[]): void {
    this.#scripts.set(id, answers);
  }

  /** The answers given in turn to `/metrics` scrapes and `/v1/models` probes from now on. */
  setScrapeAnswers(metrics: readonly WireAnswer[], models: readonly WireAnswer[]): void {
    if (metrics.length > 0) this.#metrics = metrics;
    if (models.length > 0) this.#models = models;
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    for (const socket of this.#sockets) socket.destroy();
    await Promise.all(this.#servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  #onRequest(req: IncomingMessage): void {
    const path = (req.url ?? '/').split('?')[0];
    req.resume();
    req.once('end', () => {
      let answer: WireAnswer;
      if (req.method === 'GET' && path === '/metrics') answer = this.#metrics[this.#scrapes++ % this.#metrics.length] as WireAnswer;
      else if (req.method === 'GET' && path === '/v1/models') answer = this.#models[this.#modelProbes++ % this.#models.length] as WireAnswer;
      else if (req.method === 'POST') {
        this.hits++;
        if (!req.socket.writable) {
          // The router sent this on a connection we had already closed after an answer: it sees a
          // reset, and what the client gets is decided by its retry, not by an answer from here.
          req.socket.destroy();
          return;
        }
        const id = String(req.headers['x-request-id']);
        const records = this.answered.get(id) ?? [];
        answer = this.#scripts.get(id)?.[records.length] ?? cleanAnswer({ kind: 'text', text: '{}' });
        records.push({ answer, expect: renderAnswer(answer).expect });
        this.answered.set(id, records);
      } else answer = { ...cleanAnswer({ kind: 'text', text: 'not found' }, 'text/plain'), status: 404 };
      this.#write(req.socket, answer);
    });
  }

  #write(socket: Socket, answer: WireAnswer): void {
    if (answer.reset) {
      socket.destroy();
      return;
    }
    if (answer.hang) return; // the router's timeout (or close()) ends it
    const { head, body, cut } = renderAnswer(answer);
    const wire = Buffer.concat([head, cut === undefined ? body : body.subarray(0, cut)]);
    const size = Math.ceil(wire.length / answer.pieces);
    let at = 0;
    const next = () => {
      if (socket.destroyed) return;
      const piece = wire.subarray(at, at + size);
      at += piece.length;
      if (at >= wire.length) {
        if (cut === undefined) socket.end(piece);
        else socket.write(piece, () => socket.destroy());
        return;
      }
      socket.write(piece);
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        next();
      }, answer.gapMs);
      this.#timers.add(timer);
    };
    next();
  }
}

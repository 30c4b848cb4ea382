/**
 * Generators of client requests for the fuzz runs: valid chat and other
 * inference bodies (a good share, so the run gets past validation and into
 * routing and forwarding), mutations of them, random JSON and bytes,
 * multipart with odd boundaries, random headers, paths and methods, and raw
 * requests Node's client would refuse to send (broken request lines,
 * conflicting framing, missing Host, pipelining).
 *
 * Requests are descriptions small enough to print in a counterexample;
 * {@link renderRequest} turns one into bytes (large bodies are sizes until then).
 */
import fc from 'fast-check';

/** A request body, described. */
export type BodySpec =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: readonly number[] }
  /** `before`, then `size` bytes of `a`, then `after`. */
  | { readonly kind: 'huge'; readonly before: string; readonly size: number; readonly after: string }
  /** `text` with the `bad` bytes inserted at byte `at`. */
  | { readonly kind: 'bad-utf8'; readonly text: string; readonly at: number; readonly bad: readonly number[] };

/** How a raw request frames its body. */
export type RawFraming =
  | 'length' | 'none' | 'length-short' | 'length-long' | 'length-twice' | 'length-garbage'
  | 'chunked' | 'chunked-bad' | 'chunked-and-length' | 'te-gzip-chunked' | 'te-identity' | 'te-space' | 'obs-fold';

/** A request sent with Node's client (well-formed HTTP, anything inside). */
export interface HttpRequestSpec {
  readonly transport: 'http';
  /** What the generator meant to test, for the report. */
  readonly kind: string;
  readonly method: string;
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: BodySpec;
}

/** A request written as bytes on a socket. */
export interface RawRequestSpec {
  readonly transport: 'raw';
  readonly kind: string;
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly lineEnd: '\r\n' | '\n';
  readonly host: 'present' | 'missing' | 'twice' | 'empty';
  readonly headers: readonly (readonly [string, string])[];
  readonly expect: string | null;
  readonly body: BodySpec;
  readonly framing: RawFraming;
  /** A `GET /livez` written right behind it on the same connection. */
  readonly pipelined: boolean;
  /** Write in this many pieces. */
  readonly pieces: number;
}

/** Random bytes on a socket, maybe after a plausible request line. */
export interface GarbageRequestSpec {
  readonly transport: 'garbage';
  readonly kind: 'garbage';
  readonly prefix: string;
  readonly bytes: readonly number[];
}

export type RequestSpec = HttpRequestSpec | RawRequestSpec | GarbageRequestSpec;

/** Inference routes the router forwards (POST), with how their body is read. */
const JSON_ROUTES = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/responses', '/v1/rerank', '/rerank', '/v1/score', '/score', '/tokenize', '/detokenize'];
const MULTIPART_ROUTE = '/v1/audio/transcriptions';

const textArb = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) }, // lone surrogates: JSON.stringify escapes them
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

const extrasArb = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('max_tokens', 'temperature', 'n', 'stop', 'tools', 'user', 'stream_options', '__proto__', 'constructor')), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 });

/** A valid inference body for `route` naming `model`, with random extra fields. */
function validBodyArb(model: string, route: string): fc.Arbitrary<Record<string, unknown>> {
  const stream = fc.boolean();
  let core: fc.Arbitrary<Record<string, unknown>>;
  switch (route) {
    case '/v1/chat/completions':
      core = fc.record({
        model: fc.constant(model),
        messages: fc.array(fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'developer'), content: textArb }), { minLength: 1, maxLength: 4 }),
        stream,
        user: fc.oneof(fc.constant(undefined), fc.string({ maxLength: 10 })),
      });
      break;
    case '/v1/completions':
      core = fc.record({ model: fc.constant(model), prompt: fc.oneof(textArb, fc.array(textArb, { maxLength: 3 }), fc.array(fc.nat(50_000), { maxLength: 5 })), stream });
      break;
    default:
      core = fc.record({ model: fc.constant(model), input: textArb, query: textArb, prompt: textArb });
  }
  return fc.tuple(extrasArb, core).map(([extras, body]) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(extras)) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    for (const [key, value] of Object.entries(body)) if (value !== undefined) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    return out;
  });
}

const oddValueArb = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1.5, '', [], {}, [1, 2], { a: 1 }, 'true', '__proto__', 'constructor', 'toString', ' sim-model', 'SIM-MODEL'),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** A mutation of a valid body's JSON text. */
type Mutation =
  | { readonly kind: 'set'; readonly key: string; readonly value: unknown }
  | { readonly kind: 'remove'; readonly key: string }
  | { readonly kind: 'dup-key'; readonly key: string; readonly raw: string; readonly first: boolean }
  | { readonly kind: 'raw-value'; readonly raw: string }
  | { readonly kind: 'wrap'; readonly before: string; readonly after: string }
  | { readonly kind: 'truncate'; readonly share: number }
  | { readonly kind: 'huge'; readonly size: number }
  | { readonly kind: 'deep'; readonly depth: number }
  | { readonly kind: 'bad-utf8'; readonly share: number; readonly bad: readonly number[] };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom('model', 'stream', 'messages', 'prompt', 'input', 'user'), value: oddValueArb }),
  fc.record({ kind: fc.constant('remove' as const), key: fc.constantFrom('model', 'messages', 'stream') }),
  fc.record({ kind: fc.constant('dup-key' as const), key: fc.constantFrom('model', 'stream', 'messages'), raw: fc.constantFrom('"other-model"', 'true', 'false', 'null', '"sim-model"', '[]', '{"a":1}'), first: fc.boolean() }),
  fc.record({ kind: fc.constant('raw-value' as const), raw: fc.constantFrom('1e400', '-0', '1E-999999', '9'.repeat(500), '"\\u0000"', '"\\ud800"', '"\\x41"', '"\u0001"', 'NaN', 'undefined', "'single'", '01', '.5', '+1', '"a\tb"', 'tru', 'nul') }),
  fc.record({ kind: fc.constant('wrap' as const), before: fc.constantFrom('', '\ufeff', ' \n\t', '[', '{"a":1}'), after: fc.constantFrom('', ' ', '\n', ' x', '}', ']', ',', '{}', '\u0000') }),
  fc.record({ kind: fc.constant('truncate' as const), share: fc.double({ min: 0, max: 0.99, noNaN: true }) }),
  fc.record({ kind: fc.constant('huge' as const), size: fc.oneof(fc.integer({ min: 1_000, max: 200_000 }), fc.integer({ min: 900_000, max: 1_500_000 })) }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.integer({ min: 100, max: 160 }) }),
  fc.record({ kind: fc.constant('bad-utf8' as const), share: fc.double({ min: 0, max: 1, noNaN: true }), bad: fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]) }),
);

function mutate(body: Record<string, unknown>, mutation: Mutation): BodySpec {
  const text = JSON.stringify(body);
  switch (mutation.kind) {
    case 'set':
      return { kind: 'json', value: { ...body, [mutation.key]: mutation.value } };
    case 'remove': {
      const copy = { ...body };
      delete copy[mutation.key];
      return { kind: 'json', value: copy };
    }
    case 'dup-key':
      return { kind: 'text', text: mutation.first ? `{"${mutation.key}":${mutation.raw},${text.slice(1)}` : `${text.slice(0, -1)},"${mutation.key}":${mutation.raw}}` };
    case 'raw-value':
      return { kind: 'text', text: `{"x":${mutation.raw},${text.slice(1)}` };
    case 'wrap':
      return { kind: 'text', text: mutation.before + text + mutation.after };
    case 'truncate':
      return { kind: 'text', text: text.slice(0, Math.floor(text.length * mutation.share)) };
    case 'huge':
      return { kind: 'huge', before: `${text.slice(0, -1)},"pad":"`, size: mutation.size, after: '"}' };
    case 'deep':
      return { kind: 'text', text: `${text.slice(0, -1)},"x":${'['.repeat(mutation.depth)}${']'.repeat(mutation.depth)}}` };
    case 'bad-utf8':
      return { kind: 'bad-utf8', text, at: Math.floor(Buffer.byteLength(text) * mutation.share), bad: mutation.bad };
  }
}

const contentTypeArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 3, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'text/plain', '', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream') },
);

/** Header values Node's client sends (visible ASCII and Latin-1, tabs). */
const headerValueArb = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, '')) },
  { weight: 1, arbitrary: fc.array(fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f), { maxLength: 20 }).map((codes) => String.fromCharCode(...codes)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => 'h'.repeat(n)) }, // up to past the 16 KiB header limit
);

/** Random request headers. `x-sim-*` are the simulator's test controls, not router input, and are left out. */
const headersArb = fc.array(
  fc.tuple(
    fc.oneof(
      { weight: 2, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).filter((name) => !name.startsWith('x-sim-') && name !== 'content-length' && name !== 'transfer-encoding') },
      { weight: 3, arbitrary: fc.constantFrom('x-session-id', 'x-priority', 'authorization', 'connection', 'upgrade', 'te', 'expect', 'x-forwarded-for', 'x-forwarded-proto', 'forwarded', 'content-encoding', 'accept-encoding', 'accept', 'keep-alive', 'proxy-authorization', 'trailer', 'host', 'x-request-id', 'cookie', 'range') },
    ),
    fc.oneof({ weight: 3, arbitrary: headerValueArb }, { weight: 1, arbitrary: fc.constantFrom('high', 'low', 'normal', 'close', 'keep-alive', 'upgrade', 'websocket', 'x-request-id', 'content-type, x-session-id', 'trailers', '100-continue', 'Bearer x', 'gzip', '') }),
  ),
  { maxLength: 5 },
);

const chatPath = fc.constant('/v1/chat/completions');
const routeArb = fc.oneof({ weight: 4, arbitrary: chatPath }, { weight: 3, arbitrary: fc.constantFrom(...JSON_ROUTES) });

/** Near-valid and valid inference requests over Node's client. */
function inferenceArb(model: string): fc.Arbitrary<HttpRequestSpec> {
  return routeArb.chain((path) =>
    fc.record({
      transport: fc.constant('http' as const),
      kind: fc.constant('valid'),
      method: fc.constant('POST'),
      path: fc.oneof({ weight: 8, arbitrary: fc.constant(path) }, { weight: 1, arbitrary: fc.constantFrom(`${path}?x=1`, `${path}?a=%zz&b`, `http://fuzz.example${path}`) }),
      headers: fc.tuple(contentTypeArb, fc.oneof({ weight: 2, arbitrary: fc.constant([] as (readonly [string, string])[]) }, { weight: 1, arbitrary: headersArb })).map(([type, rest]) => [['content-type', type] as const, ...rest]),
      body: validBodyArb(model, path).map((value): BodySpec => ({ kind: 'json', value })),
    }),
  );
}

function mutatedArb(model: string): fc.Arbitrary<HttpRequestSpec> {
  return fc
    .tuple(routeArb, mutationArb, contentTypeArb, headersArb)
    .chain(([path, mutation, type, headers]) =>
      validBodyArb(model, path).map((body): HttpRequestSpec => ({ transport: 'http', kind: `mutated:${mutation.kind}`, method: 'POST', path, headers: [['content-type', type], ...headers], body: mutate(body, mutation) })),
    );
}

const randomJsonArb: fc.Arbitrary<HttpRequestSpec> = fc.record({
  transport: fc.constant('http' as const),
  kind: fc.constant('random-json'),
  method: fc.constant('POST'),
  path: fc.constantFrom(...JSON_ROUTES),
  headers: contentTypeArb.map((type) => [['content-type', type] as const]),
  body: fc.jsonValue({ maxDepth: 8 }).map((value): BodySpec => ({ kind: 'json', value })),
});

const randomBytesArb: fc.Arbitrary<HttpRequestSpec> = fc.record({
  transport: fc.constant('http' as const),
  kind: fc.constant('random-bytes'),
  method: fc.constant('POST'),
  path: fc.constantFrom(...JSON_ROUTES, MULTIPART_ROUTE),
  headers: contentTypeArb.map((type) => [['content-type', type] as const]),
  body: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 512 }).map((bytes): BodySpec => ({ kind: 'bytes', bytes })),
});

function multipartArb(model: string): fc.Arbitrary<HttpRequestSpec> {
  const boundary = fc.oneof(
    { weight: 4, arbitrary: fc.constant('fuzzboundary') },
    { weight: 2, arbitrary: fc.stringMatching(/^[0-9A-Za-z'()+_,./:=?-]{1,70}$/) },
    { weight: 2, arbitrary: fc.constantFrom('', 'a', '-', 'x'.repeat(71), 'with space', '"quoted"', 'é', '--', '\t') },
  );
  const part = fc.record({
    name: fc.oneof(fc.constantFrom('model', 'file', 'language', 'response_format', 'stream'), fc.string({ maxLength: 10 })),
    value: fc.oneof({ weight: 3, arbitrary: fc.constant(model) }, { weight: 2, arbitrary: textArb }, { weight: 1, arbitrary: fc.constantFrom('', 'other-model', '__proto__') }),
    filename: fc.option(fc.constantFrom('a.wav', '', 'x"y.wav', '../../etc/passwd')),
  });
  return fc
    .record({
      boundary,
      typeForm: fc.constantFrom('normal', 'quoted', 'missing', 'twice', 'upper', 'spaced'),
      parts: fc.array(part, { maxLength: 4 }),
      closed: fc.boolean(),
      huge: fc.option(fc.integer({ min: 10_000, max: 1_200_000 }), { freq: 6 }),
      headers: fc.oneof(fc.constant([] as (readonly [string, string])[]), headersArb),
    })
    .map(({ boundary: b, typeForm, parts, closed, huge, headers }): HttpRequestSpec => {
      const type = {
        normal: `multipart/form-data; boundary=${b}`,
        quoted: `multipart/form-data; boundary="${b}"`,
        missing: 'multipart/form-data',
        twice: `multipart/form-data; boundary=${b}; boundary=other`,
        upper: `MULTIPART/FORM-DATA; BOUNDARY=${b}`,
        spaced: `multipart/form-data ; boundary = ${b}`,
      }[typeForm];
      const text = parts.map((p) => `--${b}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === null ? '' : `; filename="${p.filename}"`}\r\n\r\n${p.value}\r\n`).join('');
      const end = closed ? `--${b}--\r\n` : '';
      const body: BodySpec = huge === null ? { kind: 'text', text: text + end } : { kind: 'huge', before: `${text}--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`, size: huge, after: `\r\n${end}` };
      return { transport: 'http', kind: 'multipart', method: 'POST', path: MULTIPART_ROUTE, headers: [['content-type', type.replace(/[\r\n]/g, '')], ...headers], body };
    });
}

const methodArb = fc.oneof(
  fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'M-SEARCH', 'QUERY'),
  fc.stringMatching(/^[A-Z]{1,10}$/),
);
const pathArb = fc.oneof(
  fc.constantFrom(...JSON_ROUTES, MULTIPART_ROUTE, '/v1/models', '/livez', '/readyz', '/metrics', '/debug/endpoints', '/', '//v1/chat/completions', '/v1/chat/completions/', '/v1/../v1/chat/completions', '/v1/chat%2Fcompletions', '/V1/CHAT/COMPLETIONS', '/v1/models/sim-model', '/__proto__', '/constructor'),
  fc.webPath(),
  fc.webPath().map((p) => `${p}?${'q=1&'.repeat(3)}`),
);

/** Any method on any path, the body maybe valid. */
function pathsArb(model: string): fc.Arbitrary<HttpRequestSpec> {
  return fc.record({
    transport: fc.constant('http' as const),
    kind: fc.constant('method-path'),
    method: methodArb,
    path: pathArb.map((p) => (p.startsWith('/') ? p : `/${p}`)),
    headers: headersArb,
    body: fc.oneof(fc.constant<BodySpec>({ kind: 'text', text: '' }), validBodyArb(model, '/v1/chat/completions').map((value): BodySpec => ({ kind: 'json', value }))),
  });
}

function rawArb(model: string): fc.Arbitrary<RawRequestSpec> {
  return fc.record({
    transport: fc.constant('raw' as const),
    kind: fc.constant('raw'),
    method: fc.oneof({ weight: 8, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'post', 'CONNECT', 'PRI', 'P OST', '', 'POST\u0000', 'GÉT') }),
    target: fc.oneof(
      { weight: 8, arbitrary: fc.constant('/v1/chat/completions') },
      { weight: 2, arbitrary: fc.constantFrom('*', 'http://fuzz.example/v1/chat/completions', 'fuzz.example:443', '/v1/chat completions', '/v1/chat/completions\u0001', '/v1/chat/completions#frag', '/v1/chat/completions?x=%zz', '', 'v1/chat/completions', '/' + 'a'.repeat(20_000), '/\u00e9') },
    ),
    version: fc.oneof({ weight: 8, arbitrary: fc.constant('HTTP/1.1') }, { weight: 2, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'HTTP/1', '', 'HTTP/9.9', 'http/1.1', 'HTTP/1.1 extra') }),
    lineEnd: fc.oneof({ weight: 8, arbitrary: fc.constant('\r\n' as const) }, { weight: 1, arbitrary: fc.constant('\n' as const) }),
    host: fc.oneof({ weight: 8, arbitrary: fc.constant('present' as const) }, { weight: 1, arbitrary: fc.constantFrom('missing' as const, 'twice' as const, 'empty' as const) }),
    headers: fc.oneof(fc.constant([] as (readonly [string, string])[]), headersArb, fc.constantFrom<(readonly [string, string])[]>([['Content-Type', 'application/json']], [['bad header', 'x']], [['x-ok', 'a\u0001b']], [['', 'x']], [[':authority', 'x']])),
    expect: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('100-continue', '100-Continue', 'garbage', '') }),
    body: fc.oneof(validBodyArb(model, '/v1/chat/completions').map((value): BodySpec => ({ kind: 'json', value })), fc.constant<BodySpec>({ kind: 'text', text: '' })),
    framing: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<RawFraming>('length', 'chunked') },
      { weight: 4, arbitrary: fc.constantFrom<RawFraming>('none', 'length-short', 'length-long', 'length-twice', 'length-garbage', 'chunked-bad', 'chunked-and-length', 'te-gzip-chunked', 'te-identity', 'te-space', 'obs-fold') },
    ),
    pipelined: fc.boolean(),
    pieces: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 6 }) }),
  });
}

const garbageArb: fc.Arbitrary<GarbageRequestSpec> = fc.record({
  transport: fc.constant('garbage' as const),
  kind: fc.constant('garbage' as const),
  prefix: fc.constantFrom('', 'POST /v1/chat/completions HTTP/1.1\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', '\u0016\u0003\u0001'),
  bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 600 }),
});

/** Every kind of client request, weighted so that about half are valid enough to be forwarded. */
export function requestArb(model: string): fc.Arbitrary<RequestSpec> {
  return fc.oneof(
    { weight: 40, arbitrary: inferenceArb(model) },
    { weight: 18, arbitrary: mutatedArb(model) },
    { weight: 6, arbitrary: randomJsonArb },
    { weight: 4, arbitrary: randomBytesArb },
    { weight: 8, arbitrary: multipartArb(model) },
    { weight: 8, arbitrary: pathsArb(model) },
    { weight: 12, arbitrary: rawArb(model) },
    { weight: 4, arbitrary: garbageArb },
  );
}

/** Valid inference requests only (the engine-answer phase). */
export function validRequestArb(model: string): fc.Arbitrary<HttpRequestSpec> {
  return fc.constantFrom('/v1/chat/completions', '/v1/chat/completions', '/v1/completions', '/v1/embeddings').chain((path) =>
    validBodyArb(model, path).map((value): HttpRequestSpec => ({ transport: 'http', kind: 'valid', method: 'POST', path, headers: [['content-type', 'application/json']], body: { kind: 'json', value } })),
  );
}

/** The bytes of a body. */
export function renderBody(body: BodySpec): Buffer {
  switch (body.kind) {
    case 'json':
      return Buffer.from(JSON.stringify(body.value) ?? 'null', 'utf8');
    case 'text':
      return Buffer.from(body.text, 'utf8');
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'huge':
      return Buffer.concat([Buffer.from(body.before, 'utf8'), Buffer.alloc(body.size, 0x61), Buffer.from(body.after, 'utf8')]);
    case 'bad-utf8': {
      const text = Buffer.from(body.text, 'utf8');
      return Buffer.concat([text.subarray(0, body.at), Buffer.from(body.bad), text.subarray(body.at)]);
    }
  }
}

/** The pieces to write for a raw request, the methods of the requests in it, and whether it leaves the server waiting for bytes that never come. */
export function renderRaw(spec: RawRequestSpec | GarbageRequestSpec, requestId: string): { pieces: Buffer[]; methods: string[]; mayStall: boolean } {
  if (spec.transport === 'garbage') {
    return { pieces: [Buffer.concat([Buffer.from(spec.prefix, 'latin1'), Buffer.from(spec.bytes)])], methods: ['POST'], mayStall: true };
  }
  const eol = spec.lineEnd;
  const body = renderBody(spec.body);
  const lines = [`${spec.method} ${spec.target} ${spec.version}`.trimEnd()];
  if (spec.host === 'present') lines.push('Host: fuzz.example');
  if (spec.host === 'twice') lines.push('Host: a.example', 'Host: b.example');
  if (spec.host === 'empty') lines.push('Host:');
  lines.push(`x-request-id: ${requestId}`);
  for (const [name, value] of spec.headers) lines.push(`${name}: ${value}`);
  if (spec.expect !== null) lines.push(`Expect: ${spec.expect}`);
  let payload = body;
  const chunked = (broken: boolean) => Buffer.from(`${broken ? 'g' : ''}${body.length.toString(16)}${eol}${body.toString('latin1')}${eol}0${eol}${eol}`, 'latin1');
  switch (spec.framing) {
    case 'length': lines.push(`Content-Length: ${body.length}`); break;
    case 'none': break;
    case 'length-short': lines.push(`Content-Length: ${Math.floor(body.length / 2)}`); break;
    case 'length-long': lines.push(`Content-Length: ${body.length + 5}`); break;
    case 'length-twice': lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`); break;
    case 'length-garbage': lines.push(`Content-Length: ${body.length}x`); break;
    case 'chunked': lines.push('Transfer-Encoding: chunked'); payload = chunked(false); break;
    case 'chunked-bad': lines.push('Transfer-Encoding: chunked'); payload = chunked(true); break;
    case 'chunked-and-length': lines.push('Transfer-Encoding: chunked', `Content-Length: ${body.length}`); payload = chunked(false); break;
    case 'te-gzip-chunked': lines.push('Transfer-Encoding: gzip, chunked'); payload = chunked(false); break;
    case 'te-identity': lines.push('Transfer-Encoding: identity', `Content-Length: ${body.length}`); break;
    case 'te-space': lines.push('Transfer-Encoding : chunked'); payload = chunked(false); break;
    case 'obs-fold': lines.push(`Content-Length: ${body.length}`, 'X-Folded: a', ' b'); break;
  }
  const head = Buffer.from(lines.join(eol) + eol + eol, 'utf8');
  const wire = [head, payload];
  const methods = [spec.method];
  if (spec.pipelined) {
    wire.push(Buffer.from(`GET /livez HTTP/1.1${eol}Host: fuzz.example${eol}${eol}`, 'latin1'));
    methods.push('GET');
  }
  const all = Buffer.concat(wire);
  const size = Math.ceil(all.length / spec.pieces);
  const pieces: Buffer[] = [];
  for (let at = 0; at < all.length; at += size) pieces.push(all.subarray(at, at + size));
  // A body shorter than its declared length, or a request line the parser cannot finish, leaves the server waiting (408 territory).
  const mayStall = spec.framing === 'length-long' || spec.version === '' || spec.lineEnd === '\n';
  return { pieces, methods, mayStall };
}

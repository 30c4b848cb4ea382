/**
 * A client for the fuzz runs that sends exact bytes and judges the bytes that
 * come back. Node's own HTTP client refuses to send malformed requests and
 * hides a malformed answer behind a parse error, so requests with broken
 * framing go out over a plain socket here, and every answer is parsed by a
 * strict HTTP/1.x response parser that says what was wrong with it instead
 * of throwing.
 */
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';

/** One response as it arrived. */
export interface ParsedResponse {
  readonly status: number;
  /** Header names lower-cased, in order, duplicates kept. */
  readonly headers: readonly (readonly [string, string])[];
  /** The body with any chunked framing removed. */
  readonly body: Buffer;
  /** The body ended where its framing says (length reached, last chunk, or close for a close-delimited body). */
  readonly complete: boolean;
}

/** The first value of header `name` (lower case), if any. */
export function headerOf(response: Pick<ParsedResponse, 'headers'>, name: string): string | undefined {
  return response.headers.find(([key]) => key === name)?.[1];
}

type Step =
  | { readonly kind: 'response'; readonly response: ParsedResponse; readonly consumed: number; readonly interim: boolean }
  | { readonly kind: 'need-more' }
  | { readonly kind: 'malformed'; readonly reason: string };

// Reason phrases and field values: tab, visible ASCII, space, obs-text (RFC 9112 §4, §5).
const STATUS_LINE = /^HTTP\/1\.[01] ([1-9]\d\d) [\t\x20-\x7e\x80-\xff]*$/;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([\t\x20-\x7e\x80-\xff]*?)[ \t]*$/;

/**
 * Parses one response from the start of `buf`. `eof` says the peer closed:
 * a close-delimited body then ends, and a cut framed body comes back with
 * `complete: false`. `method` is the request's (a HEAD answer has no body).
 */
export function parseResponse(buf: Buffer, eof: boolean, method: string): Step {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd === -1) {
    if (buf.length > 65_536) return { kind: 'malformed', reason: 'response head over 64 KiB' };
    return eof ? { kind: 'malformed', reason: `connection closed inside the response head (${buf.length} bytes)` } : { kind: 'need-more' };
  }
  const lines = buf.toString('latin1', 0, headEnd).split('\r\n');
  const statusMatch = STATUS_LINE.exec(lines[0] ?? '');
  if (statusMatch === null) return { kind: 'malformed', reason: `bad status line ${JSON.stringify(lines[0])}` };
  const status = Number(statusMatch[1]);
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const match = HEADER_LINE.exec(line);
    if (match === null) return { kind: 'malformed', reason: `bad header line ${JSON.stringify(line.slice(0, 80))}` };
    headers.push([(match[1] as string).toLowerCase(), match[2] as string]);
  }
  const bodyStart = headEnd + 4;
  if (status < 200) return { kind: 'response', response: { status, headers, body: Buffer.alloc(0), complete: true }, consumed: bodyStart, interim: true };
  const done = (body: Buffer, complete: boolean, consumed: number): Step => ({ kind: 'response', response: { status, headers, body, complete }, consumed, interim: false });
  if (method === 'HEAD' || status === 204 || status === 304) return done(Buffer.alloc(0), true, bodyStart);
  const transferEncodings = headers.filter(([name]) => name === 'transfer-encoding').map(([, value]) => value.toLowerCase());
  const lengths = headers.filter(([name]) => name === 'content-length').map(([, value]) => value);
  if (transferEncodings.length > 0 && lengths.length > 0) return { kind: 'malformed', reason: 'both Transfer-Encoding and Content-Length' };
  if (transferEncodings.length > 0) {
    if (!/(^|,)\s*chunked\s*$/.test(transferEncodings.join(','))) return { kind: 'malformed', reason: `transfer-encoding ${transferEncodings.join(',')}` };
    return dechunk(buf, bodyStart, eof, done);
  }
  if (lengths.length > 0) {
    if (new Set(lengths).size !== 1 || !/^\d{1,15}$/.test(lengths[0] as string)) return { kind: 'malformed', reason: `content-length ${lengths.join(',')}` };
    const length = Number(lengths[0]);
    const end = bodyStart + length;
    if (buf.length >= end) return done(buf.subarray(bodyStart, end), true, end);
    return eof ? done(buf.subarray(bodyStart), false, buf.length) : { kind: 'need-more' };
  }
  return eof ? done(buf.subarray(bodyStart), true, buf.length) : { kind: 'need-more' };
}

function dechunk(buf: Buffer, start: number, eof: boolean, done: (body: Buffer, complete: boolean, consumed: number) => Step): Step {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd === -1) return eof ? done(Buffer.concat(parts), false, buf.length) : { kind: 'need-more' };
    const sizeLine = buf.toString('latin1', at, lineEnd);
    const size = /^([0-9a-fA-F]{1,8})(;.*)?$/.exec(sizeLine);
    if (size === null) return { kind: 'malformed', reason: `bad chunk size line ${JSON.stringify(sizeLine.slice(0, 40))}` };
    const length = parseInt(size[1] as string, 16);
    if (length === 0) {
      const trailerEnd = buf.indexOf('\r\n\r\n', lineEnd);
      if (buf.subarray(lineEnd, lineEnd + 4).toString('latin1') === '\r\n\r\n') return done(Buffer.concat(parts), true, lineEnd + 4);
      if (trailerEnd === -1) return eof ? done(Buffer.concat(parts), false, buf.length) : { kind: 'need-more' };
      return done(Buffer.concat(parts), true, trailerEnd + 4);
    }
    const dataStart = lineEnd + 2;
    if (buf.length < dataStart + length + 2) {
      if (!eof) return { kind: 'need-more' };
      parts.push(buf.subarray(dataStart, Math.min(buf.length, dataStart + length)));
      return done(Buffer.concat(parts), false, buf.length);
    }
    if (buf.toString('latin1', dataStart + length, dataStart + length + 2) !== '\r\n') return { kind: 'malformed', reason: 'chunk data not followed by CRLF' };
    parts.push(buf.subarray(dataStart, dataStart + length));
    at = dataStart + length + 2;
  }
}

/** How an exchange over one connection ended. */
export interface RawOutcome {
  /** Final responses in order (interim 1xx answers are skipped and counted). */
  readonly responses: readonly ParsedResponse[];
  readonly interim: number;
  /** What ended the exchange: every expected answer came; the peer closed; it reset; or our deadline passed. */
  readonly end: 'answered' | 'closed' | 'reset' | 'deadline';
  /** Set when the bytes that came back are not a valid HTTP/1.x response. */
  readonly malformed: string | undefined;
}

/** Options of {@link rawExchange}. */
export interface RawExchangeOptions {
  /** Methods of the requests in `bytes`, in order: one answer is expected per request. */
  readonly methods: readonly string[];
  /** Give up waiting after this long (ms): then half-close and wait `graceMs` more. */
  readonly deadlineMs: number;
  readonly graceMs: number;
}

/**
 * Writes `pieces` (one write each) to `127.0.0.1:port` and collects what
 * comes back until every expected answer arrived, the peer closed or reset,
 * or the deadline passed. Never rejects.
 */
export function rawExchange(port: number, pieces: readonly Buffer[], options: RawExchangeOptions): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const responses: ParsedResponse[] = [];
    let interim = 0;
    let received = Buffer.alloc(0);
    let settled = false;
    let malformed: string | undefined;
    const timers: NodeJS.Timeout[] = [];
    const finish = (end: RawOutcome['end']) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      if (end !== 'answered') drain(true);
      socket.destroy();
      resolve({ responses, interim, end, malformed });
    };
    const drain = (eof: boolean) => {
      while (malformed === undefined && responses.length < options.methods.length && (received.length > 0 || !eof)) {
        const step = parseResponse(received, eof, options.methods[responses.length] ?? 'GET');
        if (step.kind === 'need-more') return;
        if (step.kind === 'malformed') {
          malformed = step.reason;
          return;
        }
        received = received.subarray(step.consumed);
        if (step.interim) interim++;
        else responses.push(step.response);
        if (eof && received.length === 0) return;
      }
    };
    socket.on('connect', () => {
      for (const piece of pieces) socket.write(piece);
    });
    // Once every answer came, a server that said `Connection: close` must close with nothing more:
    // bytes after the last answer are an answer to no request.
    const closing = () => responses.length >= options.methods.length && responses.some((r) => /close/i.test(headerOf(r, 'connection') ?? ''));
    const leftover = () => {
      if (malformed === undefined && received.length > 0 && closing()) malformed = `${received.length} bytes after the last answer: ${JSON.stringify(received.toString('latin1', 0, 80))}`;
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      drain(false);
      leftover();
      if (malformed !== undefined || (responses.length >= options.methods.length && !closing())) finish('answered');
    });
    socket.on('end', () => {
      drain(true);
      leftover();
      finish(responses.length >= options.methods.length ? 'answered' : 'closed');
    });
    socket.on('error', () => finish('reset'));
    socket.on('close', () => finish('closed'));
    timers.push(
      setTimeout(() => {
        socket.end(); // half-close: the server now knows no more bytes come
        timers.push(setTimeout(() => finish('deadline'), options.graceMs));
      }, options.deadlineMs),
    );
  });
}

/** What {@link httpExchange} saw. */
export type HttpOutcome =
  | { readonly kind: 'response'; readonly response: ParsedResponse }
  | { readonly kind: 'no-response'; readonly reason: string }
  | { readonly kind: 'deadline' }
  /** Node's client refused to send it (an invalid header, say): not a request at all. */
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * Sends one request with Node's client on a fresh connection and collects
 * the whole answer (chunked framing removed, a cut body marked incomplete).
 * `headers` is a flat name/value list, duplicates allowed. Never rejects.
 */
export function httpExchange(
  url: string,
  options: { readonly method: string; readonly headers: readonly string[]; readonly body: Buffer; readonly deadlineMs: number },
): Promise<HttpOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: HttpOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      settle({ kind: 'deadline' });
      req?.destroy();
    }, options.deadlineMs);
    let req: ReturnType<typeof httpRequest> | undefined;
    try {
      // With headers given as a list, Node adds no Host of its own.
      const hasHost = options.headers.some((value, i) => i % 2 === 0 && value.toLowerCase() === 'host');
      const headers = hasHost ? [...options.headers] : ['host', new URL(url).host, ...options.headers];
      req = httpRequest(url, { method: options.method, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        const headers: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
        const done = (complete: boolean) =>
          settle({ kind: 'response', response: { status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks), complete } });
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(res.complete));
        res.on('aborted', () => done(false));
        res.on('error', () => done(false));
        res.on('close', () => done(res.complete));
      });
    } catch (err) {
      settle({ kind: 'refused', reason: (err as Error).message });
      return;
    }
    req.on('error', (err: NodeJS.ErrnoException) => settle({ kind: 'no-response', reason: err.code ?? err.message }));
    req.end(options.body);
  });
}

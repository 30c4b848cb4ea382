/**
 * The load generator: closed loop (fixed concurrency) or open loop (Poisson
 * arrivals at a fixed or ramping rate), bounded by time or request count,
 * with a warm-up that is sent but not measured. Every response is read to
 * the end and validated ({@link StreamCheck}, {@link readJsonResponse}), and
 * its token counts taken from the usage it reports, else counted.
 *
 * Open-loop latency counts from the *scheduled* send time, so a target that
 * stalls is charged for the requests it kept waiting (no coordinated
 * omission); how late the generator itself sent is reported separately, so
 * a slow generator is visible rather than mistaken for a slow target.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { seededRng } from '../sim/random.ts';
import { Histogram } from './histogram.ts';
import type { FailureExample, LoadProgress, LoadResult, LoadSpec } from './load-spec.ts';
import { PerSecond } from './per-second.ts';
import { CHARS_PER_TOKEN, RequestBodies } from './request-bodies.ts';
import { readJsonResponse, StreamCheck, type Expectation, type ReportedUsage, type StreamVerdict } from './response-check.ts';

const MAX_EXAMPLES = 5;
const BODY_HEAD_BYTES = 512;
const PROGRESS_EVERY_MS = 1000;

/** Classifies a thrown client error for the failure counts. */
function errorKind(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'reset';
  if (code === 'ECONNREFUSED') return 'refused';
  if (typeof code === 'string' && code.includes('TIMEOUT')) return 'timeout';
  return typeof code === 'string' ? code : 'client error';
}

/** One request and its checked response. */
interface Exchange {
  /** 0 when no response arrived. */
  readonly status: number;
  readonly retryAfter: boolean;
  readonly bodyHead: string;
  readonly firstByteAt: number | undefined;
  readonly endedAt: number;
  readonly verdict: StreamVerdict | undefined;
  /** The first thing wrong with the exchange, if anything (a bad status is left to the caller). */
  readonly problem: string | undefined;
  readonly kind: string;
  /** What a well-formed answer reported of its tokens, if anything. */
  readonly usage: ReportedUsage | undefined;
  /** Output tokens counted from the answer itself: streamed content events, else its text at ~4 characters a token. */
  readonly countedTokens: number;
  /** The generated text, when the expectation asked to keep it. */
  readonly text: string | undefined;
}

/**
 * Sends one request with undici's handler API (no stream objects: the
 * generator must stay cheaper than what it measures) and validates the
 * response as it arrives.
 */
function exchangeOnce(pool: Pool, path: string, headers: Record<string, string>, body: string, stream: boolean, expect: Expectation, newConnection: boolean): Promise<Exchange> {
  return new Promise((resolve) => {
    let status = 0;
    let retryAfter = false;
    let eventStream = false;
    let bodyHead = '';
    let firstByteAt: number | undefined;
    let check: StreamCheck | undefined;
    const chunks: Buffer[] = [];
    const settle = (problem: string | undefined, kind: string, json?: { usage: ReportedUsage | undefined; text: string }) => {
      const endedAt = performance.now();
      const verdict = check?.finish();
      const usage = verdict?.usage ?? json?.usage;
      const countedTokens = verdict?.events ?? Math.ceil((json?.text.length ?? 0) / CHARS_PER_TOKEN);
      const text = expect.keepText === true ? (verdict?.text ?? json?.text) : undefined;
      resolve({ status, retryAfter, bodyHead, firstByteAt, endedAt, verdict, problem: problem ?? verdict?.problem, kind, usage, countedTokens, text });
    };
    pool.dispatch(
      { path, method: 'POST', headers, body, reset: newConnection },
      {
        onRequestStart() {},
        onResponseStart(_controller, statusCode, responseHeaders) {
          status = statusCode;
          retryAfter = responseHeaders['retry-after'] !== undefined;
          eventStream = String(responseHeaders['content-type'] ?? '').startsWith('text/event-stream');
          if (status === 200 && stream && eventStream) check = new StreamCheck(expect);
        },
        onResponseData(_controller, chunk: Buffer) {
          const now = performance.now();
          firstByteAt ??= now;
          if (check !== undefined) check.push(chunk, now);
          else chunks.push(chunk);
          if (bodyHead.length < BODY_HEAD_BYTES) bodyHead += chunk.subarray(0, BODY_HEAD_BYTES - bodyHead.length).toString('latin1');
        },
        onResponseEnd() {
          if (status !== 200) return settle(undefined, 'corrupt');
          if (stream && !eventStream) return settle('streamed request answered without text/event-stream', 'corrupt');
          if (stream) return settle(undefined, 'corrupt');
          const answer = readJsonResponse(Buffer.concat(chunks).toString('utf8'), expect);
          settle(answer.problem, 'corrupt', answer);
        },
        onResponseError(_controller, err) {
          const kind = errorKind(err);
          check = undefined;
          settle(`${kind}: ${err.message}`, kind);
        },
      },
    );
  });
}

/** Runs `spec` in this process; `onProgress` is called about once a second. */
export async function runLoad(spec: LoadSpec, onProgress?: (progress: LoadProgress) => void): Promise<LoadResult> {
  if ((spec.durationMs === undefined) === (spec.requests === undefined)) throw new Error('a load spec needs exactly one of durationMs and requests');
  const connections = spec.mode.kind === 'closed' ? spec.mode.concurrency : spec.mode.maxConnections;
  const pool = new Pool(spec.target, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const bodies = new RequestBodies(spec.request, spec.seed);
  const baseHeaders = { 'content-type': 'application/json', ...spec.request.headers };
  const perClient = spec.mode.kind === 'closed' && spec.mode.sessionPerClient === true;

  const e2e = new Histogram();
  const ttft = new Histogram();
  const itl = new Histogram();
  const sendLag = new Histogram();
  const outputTokens = new Histogram();
  const promptTokens = new Histogram();
  const tokens = { fromUsage: 0, askedOutput: 0, askedPrompt: 0 };
  const seconds = new PerSecond();
  const failureKinds: Record<string, number> = {};
  const failureExamples: FailureExample[] = [];
  let sent = 0;
  let measured = 0;
  let ok = 0;
  let shed = 0;
  let failed = 0;
  let lastMeasuredEnd = 0;
  const timeline: number[] = [];

  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const stopAt = spec.durationMs === undefined ? Number.POSITIVE_INFINITY : measureFrom + spec.durationMs;
  /** True while another request should be started at `now`. */
  const wanted = (now: number) => now < stopAt && (spec.requests === undefined || now < measureFrom || measured < spec.requests);

  const fail = (kind: string, example: FailureExample) => {
    failed++;
    failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
    if (failureExamples.length < MAX_EXAMPLES) failureExamples.push(example);
  };

  /** Sends request number `n`; `scheduledAt` is when it should have left (open loop) or did (closed loop); `client`: the closed-loop client sending it. */
  const send = async (n: number, scheduledAt: number, client?: number): Promise<void> => {
    const inWindow = scheduledAt >= measureFrom;
    if (inWindow) measured++;
    sent++;
    const stream = spec.request.stream === 'mixed' ? n % 2 === 0 : spec.request.stream;
    const requestId = `${spec.idPrefix}-${n}`;
    const headers: Record<string, string> = { ...baseHeaders, 'x-request-id': requestId };
    // The session a request belongs to: its closed-loop client's, or one of the template's users in turn.
    const session = perClient && client !== undefined ? client : spec.request.users > 0 ? n % spec.request.users : undefined;
    if (perClient && client !== undefined) headers['x-session-id'] = `${spec.idPrefix}-client-${client}`;
    // A shaped template's sessions are this generator's own conversations, so their keys are its own too (unique across processes and runs).
    else if (session !== undefined) headers['x-session-id'] = spec.request.shape === undefined ? `user-${session}` : `${spec.idPrefix}-session-${session}`;
    const expect = { toolCall: spec.request.tools, idSuffix: spec.request.checkIds ? requestId : undefined, keepText: bodies.keepsAnswers };
    const draft = bodies.draft(requestId, stream, session);
    const exchange = await exchangeOnce(pool, spec.request.path, headers, draft.body, stream, expect, spec.newConnections === true);
    if (exchange.status === 429 && exchange.retryAfter) {
      if (inWindow) shed++;
      return;
    }
    const { status, bodyHead, firstByteAt, verdict } = exchange;
    let { problem, kind } = exchange;
    if (problem === undefined && status !== 200) [kind, problem] = [`status ${status}`, `status ${status}`];
    const done = exchange.endedAt;
    const second = Math.floor((done - start) / 1000);
    const firstToken = (verdict?.firstTokenAt ?? firstByteAt ?? done) - scheduledAt;
    const answerTokens = exchange.usage?.completionTokens ?? exchange.countedTokens;
    if (problem === undefined) {
      timeline[second] = (timeline[second] ?? 0) + 1;
      seconds.success(second, firstToken, verdict?.tokenGaps ?? [], answerTokens);
      if (draft.turn !== undefined) bodies.answered(draft.turn, exchange.text ?? '');
    } else seconds.failure(second);
    if (!inWindow) return;
    lastMeasuredEnd = Math.max(lastMeasuredEnd, done);
    if (problem !== undefined) return fail(kind, { requestId, status, problem, bodyHead });
    ok++;
    e2e.record(done - scheduledAt);
    ttft.record(firstToken);
    for (const gap of verdict?.tokenGaps ?? []) itl.record(gap);
    outputTokens.record(answerTokens);
    if (exchange.usage !== undefined) {
      tokens.fromUsage++;
      promptTokens.record(exchange.usage.promptTokens);
    }
    tokens.askedOutput += draft.maxTokens ?? 0;
    tokens.askedPrompt += draft.promptTokens ?? 0;
  };

  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  const progressTimer = onProgress === undefined ? undefined : setInterval(() => onProgress({ elapsedMs: performance.now() - start, sent, ok, shed, failed, e2e: e2e.snapshot() }), PROGRESS_EVERY_MS);
  const inFlight = new Set<Promise<void>>();
  try {
    if (spec.mode.kind === 'closed') {
      const worker = async (client: number) => {
        while (wanted(performance.now())) await send(sent, performance.now(), client);
      };
      await Promise.all(Array.from({ length: spec.mode.concurrency }, (_, client) => worker(client)));
    } else {
      const { ratePerS, rampFromPerS = ratePerS, rampMs = 0 } = spec.mode;
      const rateAt = (t: number) => (t >= rampMs ? ratePerS : rampFromPerS + ((ratePerS - rampFromPerS) * t) / rampMs);
      const random = seededRng(spec.seed);
      // Exponential gaps at the rate in force when each gap starts: Poisson arrivals with a piecewise-constant rate.
      let next = start;
      while (true) {
        next += (-Math.log(1 - random()) * 1000) / rateAt(next - start);
        if (!wanted(next)) break;
        let now = performance.now();
        if (next - now > 1) {
          await new Promise((resolve) => setTimeout(resolve, next - now));
          now = performance.now();
        }
        if (next >= measureFrom) sendLag.record(Math.max(0, now - next));
        // Sent up to a millisecond early (timer granularity): latency then counts from the actual send.
        // Sent late: it counts from the schedule, so a stalled target is charged for the wait it caused.
        const request = send(sent, Math.min(now, next));
        inFlight.add(request);
        void request.finally(() => inFlight.delete(request));
      }
      await Promise.all(inFlight);
    }
  } finally {
    if (progressTimer !== undefined) clearInterval(progressTimer);
    await pool.close();
  }
  const cpu = process.cpuUsage(cpuBefore);
  loopDelay.disable();
  const end = performance.now();
  return {
    measured,
    ok,
    shed,
    failed,
    failureKinds,
    failureExamples,
    e2e: e2e.snapshot(),
    ttft: ttft.snapshot(),
    itl: itl.snapshot(),
    sendLag: sendLag.snapshot(),
    timeline: Array.from(timeline, (n) => n ?? 0),
    seconds: seconds.snapshot(),
    tokens: { ...tokens, output: outputTokens.snapshot(), prompt: promptTokens.snapshot() },
    windowMs: spec.durationMs ?? Math.max(1, lastMeasuredEnd - measureFrom),
    cpuShare: (cpu.user + cpu.system) / 1000 / (end - start),
    loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
  };
}

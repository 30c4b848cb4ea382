/**
 * Fuzz runs against a live router process (so a crash shows as an exit):
 * first hostile client requests in front of real engine simulators, then
 * valid requests in front of an engine whose every answer, scrape and model
 * list is generated. Throughout, the router must not exit, its admin /livez
 * must keep answering 200, and every answer a client gets must be either the
 * router's own error in the OpenAI shape with a SWITCHYARD_* code, a local
 * answer (/livez, /readyz, /v1/models), or the engine's answer passed through
 * byte for byte (cut only when the engine's own answer was cut or broken, as
 * the contract allows for failures after the first response byte). A closed
 * connection without an answer is allowed only where the request itself
 * never finished (408 territory) or was larger than the body limit (413).
 *
 * Each phase runs for SWITCHYARD_FUZZ_SECONDS (default 20) from a fixed seed
 * (SWITCHYARD_FUZZ_SEED); a failure prints the seed and the run's path:
 * replay with SWITCHYARD_FUZZ_SEED=<seed> SWITCHYARD_FUZZ_PATH=<path>. The
 * router keeps state across runs, so the path replays the failing input; the
 * seed alone replays the whole sequence that led to it. With
 * SWITCHYARD_FUZZ_KEEP_GOING=1 a contract violation is recorded instead of
 * ending the run (the test still fails), to see what else breaks, e.g. on an
 * older build: only an exit or a failed /livez then ends it early.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { SwitchyardError, type ErrorCode } from '../../router/errors/errors.ts';
import { pathOf } from '../../router/request/request-target.ts';
import { FuzzingEngine, inferenceAnswerArb, metricsAnswerArb, modelsAnswerArb, type AnswerRecord } from './fuzz/fuzzing-engine.ts';
import { sampleLivez, type LivezReport } from './fuzz/livez-sampler.ts';
import { headerOf, httpExchange, rawExchange, type ParsedResponse } from './fuzz/raw-http.ts';
import { renderBody, renderRaw, requestArb, validRequestArb, type RequestSpec } from './fuzz/request-arbitraries.ts';
import { send, startRouterProcess, type RouterProcess } from '../kit/harness.ts';

const SECONDS = Number(process.env['SWITCHYARD_FUZZ_SECONDS'] ?? 20);
const SEED = Number(process.env['SWITCHYARD_FUZZ_SEED'] ?? 20_250_611);
const REPLAY_PATH = process.env['SWITCHYARD_FUZZ_PATH'];
const KEEP_GOING = process.env['SWITCHYARD_FUZZ_KEEP_GOING'] === '1';
const SIM_MODEL = 'sim-model';
const FUZZ_MODEL = 'fuzz-model';
const MAX_BODY_BYTES = 1024 * 1024;
/** Longest wait for an answer the router owes (ms): its upstream timeouts in these runs are at most 4 s. */
const ANSWER_DEADLINE_MS = 10_000;
/** Wait for an answer to a request that never finished (ms), then half-close and wait 1 s more. */
const STALL_DEADLINE_MS = 1_500;

// Log level info: the harness learns the ports from the 'switchyard listening' line.
const COMMON_FLAGS = [
  '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--log-level', 'info',
  '--server-max-body-bytes', String(MAX_BODY_BYTES),
];

/** The router process, watched: its exit, the tail of its stderr, its admin /livez. */
class WatchedRouter {
  readonly process: RouterProcess;
  readonly base: string;
  exited: string | undefined;
  #stderr = '';
  readonly #livez: ReturnType<typeof sampleLivez>;
  #stopped: Promise<LivezReport> | undefined;

  private constructor(started: RouterProcess) {
    this.process = started;
    this.base = `http://127.0.0.1:${started.traffic}`;
    started.child.once('exit', (code, signal) => (this.exited = `code ${String(code)}, signal ${String(signal)}`));
    started.child.stderr?.on('data', (text: string) => (this.#stderr = (this.#stderr + text).slice(-6_000)));
    this.#livez = sampleLivez(`http://127.0.0.1:${started.admin}/livez`);
  }

  static async start(backends: readonly string[], flags: readonly string[], models: readonly string[]): Promise<WatchedRouter> {
    const router = new WatchedRouter(await startRouterProcess([...COMMON_FLAGS, ...flags, ...backends.flatMap((url) => ['--backend', url])]));
    for (let i = 0; i < 200; i++) {
      const listed = await send(`${router.base}/v1/models`, { method: 'GET' });
      if (models.every((model) => listed.body.includes(`"${model}"`))) return router;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the router never listed ${models.join(', ')}`);
  }

  /** Throws when the router exited or /livez failed. */
  assertAlive(): void {
    if (this.exited !== undefined) throw new Error(`the router process exited (${this.exited}); stderr tail:\n${this.#stderr}`);
    if (this.#livez.failures.length > 0) throw new Error(`admin /livez failed: ${this.#livez.failures.join('; ')}`);
  }

  get stderrTail(): string {
    return this.#stderr;
  }

  /** Stops sampling and kills the router; safe to call again. */
  stop(): Promise<LivezReport> {
    this.#stopped ??= (async () => {
      const report = await this.#livez.stop();
      if (this.process.child.exitCode === null && this.exited === undefined) {
        this.process.child.kill('SIGKILL');
        await this.process.exit;
      }
      return report;
    })();
    return this.#stopped;
  }
}

/** Counts of one phase, for the report. */
class Tally {
  requests = 0;
  /** Requests an engine received (counted once whatever the retries). */
  reached = 0;
  readonly statuses = new Map<string, number>();
  readonly kinds = new Map<string, number>();

  /** Contract violations seen in keep-going mode, by kind: how many, and the first one in full. */
  readonly violations = new Map<string, { count: number; example: string }>();
  violationCount = 0;

  /** Fails the run at the first violation, or (SWITCHYARD_FUZZ_KEEP_GOING=1) records it and goes on, to see what else breaks. */
  violate(problems: readonly string[]): void {
    if (problems.length === 0) return;
    if (!KEEP_GOING) throw new Error(problems.join('\n'));
    for (const problem of problems) {
      this.violationCount++;
      const kind = problem.replace(/^request \d+( \([^)]*\))?: /, '').replace(/\d+/g, 'N').slice(0, 90);
      const seen = this.violations.get(kind) ?? { count: 0, example: problem.slice(0, 1_500) };
      seen.count++;
      this.violations.set(kind, seen);
    }
  }

  /** The violations by kind, most frequent first. */
  violationReport(): string {
    return [...this.violations.values()].sort((a, b) => b.count - a.count).map(({ count, example }) => `${count}x, e.g. ${example}`).join('\n');
  }

  count(kind: string, outcome: string, reached = false): void {
    this.requests++;
    if (reached) this.reached++;
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
  }

  static line(counts: ReadonlyMap<string, number>): string {
    return [...counts].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${key}: ${n}`).join(', ');
  }
}

/** Why `response` is not a well-formed router error, or undefined when it is one. */
function routerErrorProblem(response: ParsedResponse, method: string): string | undefined {
  if (response.status < 400) return `status ${response.status}`;
  if (!(headerOf(response, 'content-type') ?? '').startsWith('application/json')) return `content-type ${headerOf(response, 'content-type')}`;
  if ((response.status === 429 || response.status === 503) && !/^[1-9]\d*$/.test(headerOf(response, 'retry-after') ?? '')) return `${response.status} without a Retry-After of whole seconds`;
  if (method === 'HEAD') return undefined;
  if (!response.complete) return 'error body cut short';
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.body.toString('utf8'));
  } catch {
    return `body is not JSON: ${JSON.stringify(response.body.toString('utf8').slice(0, 120))}`;
  }
  const outer = parsed as { error?: unknown };
  const error = outer.error as { message?: unknown; type?: unknown; param?: unknown; code?: unknown } | undefined;
  if (typeof outer !== 'object' || outer === null || Object.keys(outer).join() !== 'error' || typeof error !== 'object' || error === null) return `not {"error":{...}}: ${response.body.toString('utf8').slice(0, 120)}`;
  if (Object.keys(error).sort().join() !== 'code,message,param,type') return `error keys ${Object.keys(error).join()}`;
  if (typeof error.message !== 'string' || error.message === '' || typeof error.type !== 'string') return 'message or type not a string';
  if (error.param !== null && typeof error.param !== 'string') return 'param neither null nor a string';
  if (typeof error.code !== 'string' || !/^SWITCHYARD_[A-Z0-9_]+$/.test(error.code)) return `code ${String(error.code)}`;
  return undefined;
}

/** The router's own error body (a passed-through SSE stream may end in its error event: not this). */
function isRouterError(response: ParsedResponse): boolean {
  const head = response.body.toString('utf8', 0, 4_096);
  return response.status >= 400 && head.startsWith('{"error":{') && head.includes('"code":"SWITCHYARD_');
}

/** A SWITCHYARD code's catalogued status, or undefined when the code is not in the catalogue. */
function statusOfCode(response: ParsedResponse): number | undefined {
  const code = /"code":"(SWITCHYARD_[A-Z0-9_]+)"/.exec(response.body.toString('utf8'))?.[1];
  try {
    return new SwitchyardError(code as ErrorCode, '').status;
  } catch {
    return undefined;
  }
}

/** `status` or `status CODE` for a router error: the outcome label of the report. */
function outcomeOf(response: ParsedResponse): string {
  const code = /"code":"SWITCHYARD_([A-Z0-9_]+)"/.exec(response.body.toString('utf8', 0, 4_096))?.[1];
  if (code === undefined) return String(response.status);
  return isRouterError(response) ? `${response.status} ${code}` : `${response.status} cut, ${code} event`;
}

/** A request or answer description for a report, long runs of one character shown as counts. */
function compact(value: unknown, max = 6_000): string {
  return fc.stringify(value).replace(/(.)\1{49,}/g, (run, char: string) => `${char}×${run.length}`).slice(0, max);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Judges a response no fuzzing engine answered: the router's own error, a local route, or a simulator's bytes. */
function judgeRouterOrSimulator(response: ParsedResponse, method: string, target: string, requestId: string, sims: readonly EngineSimulator[]): string | undefined {
  const id = headerOf(response, 'x-request-id') ?? requestId;
  const sim = sims.find((engine) => engine.received(id) !== undefined);
  if (sim !== undefined && !isRouterError(response)) {
    const sent = sim.sent(id);
    if (sent === undefined) {
      // The simulator records only the answers it generates; its own vLLM-style errors it does not
      // (the older flat shape, and the nested one of vLLM's Responses API).
      if (!response.complete) return `the simulator's ${response.status} answer reached the client cut`;
      return response.status >= 400 && /^\{"(object":"error"|error":\{)/.test(response.body.toString('utf8')) ? undefined : `status ${response.status}: the simulator got ${id} but has not finished answering it`;
    }
    if (response.status !== sent.status) return `the simulator answered ${sent.status}, the client got ${response.status}`;
    if (!response.complete) return `the simulator's ${sent.status} answer reached the client cut after ${response.body.length} bytes`;
    if (sha256(response.body) !== sent.sha256) return `the simulator sent ${sent.bytes} bytes, the client got ${response.body.length} different ones`;
    return undefined;
  }
  if (response.status < 400) {
    const local = ['/livez', '/readyz', '/v1/models'].includes(pathOf(target)) && (method === 'GET' || method === 'HEAD');
    return local && response.status === 200 ? undefined : `${response.status} that no engine sent, to ${method} ${target.slice(0, 80)}`;
  }
  const problem = routerErrorProblem(response, method);
  if (problem !== undefined) return `router answer ${response.status} is not an OpenAI error: ${problem}`;
  const catalogued = method === 'HEAD' ? response.status : statusOfCode(response);
  if (catalogued === undefined) return `unknown code in ${response.body.toString('utf8').slice(0, 160)}`;
  if (catalogued !== response.status) return `status ${response.status} with a code catalogued as ${catalogued}`;
  return undefined;
}

/** One request of phase 1 sent and judged: its outcome label and what was wrong, if anything. */
async function exchangeHostile(spec: RequestSpec, id: string, port: number, sims: readonly EngineSimulator[]): Promise<{ outcome: string; problem: string | undefined } | undefined> {
  if (spec.transport === 'http') {
    const body = renderBody(spec.body);
    const headers = [...spec.headers.flat(), 'x-request-id', id];
    const oversize = body.length > MAX_BODY_BYTES;
    const result = await httpExchange(`http://127.0.0.1:${port}${spec.path}`, { method: spec.method, headers, body, deadlineMs: ANSWER_DEADLINE_MS });
    switch (result.kind) {
      case 'refused':
        return undefined; // Node's client would not send it: no request happened
      case 'deadline':
        return { outcome: 'no answer', problem: `no answer within ${ANSWER_DEADLINE_MS} ms` };
      case 'no-response':
        // Known and left as is: the raw answer to bytes the HTTP parser rejects (431 for headers too large, 400 for
        // the unframed body Node's client sends after a HEAD, parsed as a next request) carries a JSON body, and
        // after a HEAD the client expects none: it sees bytes after a bodiless answer on a closing connection.
        if (spec.method === 'HEAD' && result.reason === 'HPE_CLOSED_CONNECTION') return { outcome: 'HEAD answered with a body', problem: undefined };
        if (result.reason.startsWith('HPE_')) return { outcome: 'malformed', problem: `malformed response: ${result.reason}` };
        return { outcome: 'closed', problem: oversize ? undefined : `connection closed without an answer (${result.reason})` };
      case 'response': {
        const problem = judgeRouterOrSimulator(result.response, spec.method, spec.path, id, sims);
        return { outcome: outcomeOf(result.response), problem };
      }
    }
  }
  const { pieces, methods, mayStall } = renderRaw(spec, id);
  const result = await rawExchange(port, pieces, { methods, deadlineMs: mayStall ? STALL_DEADLINE_MS : ANSWER_DEADLINE_MS, graceMs: 1_000 });
  if (result.malformed !== undefined) return { outcome: 'malformed', problem: `malformed response: ${result.malformed}` };
  const first = result.responses[0];
  if (first === undefined) {
    const outcome = result.end === 'deadline' ? 'no answer' : 'closed';
    // Known and left as is: a request answered with a close (417, 400 at the protocol edge) and followed on
    // the same connection by another is sometimes reset: the server closes with the next request unread,
    // the kernel answers that with RST, and the client drops the answer it had not read yet. Closing
    // lingeringly (half-close, drain, then close, as nginx does) would fix it.
    if (result.end === 'reset' && spec.transport === 'raw' && spec.pipelined) return { outcome: 'reset after a pipelined request', problem: undefined };
    return { outcome, problem: mayStall ? undefined : `${outcome} (${result.end}) without an answer` };
  }
  const target = spec.transport === 'raw' ? spec.target : '/';
  for (const [i, response] of result.responses.entries()) {
    const problem = i === 0 ? judgeRouterOrSimulator(response, methods[0] ?? 'POST', target, id, sims) : judgeRouterOrSimulator(response, 'GET', '/livez', '', sims);
    if (problem !== undefined) return { outcome: outcomeOf(first), problem };
  }
  return { outcome: outcomeOf(first), problem: undefined };
}

const SSE_ERROR = Buffer.from('data: {"error":');

/** Whether `body` is a prefix of `payload` followed by the router's SSE error event (a stream cut by the engine). */
function isCutStream(body: Buffer, payload: Buffer): boolean {
  const at = body.lastIndexOf(SSE_ERROR);
  if (at === -1 || !body.subarray(at).toString('utf8').includes('SWITCHYARD_UPSTREAM_FAILED') || !body.toString('latin1').endsWith('\n\n')) return false;
  const before = body.subarray(0, at);
  return [0, 1, 2].some((trim) => before.length >= trim && payload.subarray(0, before.length - trim).equals(before.subarray(0, before.length - trim)));
}

/** Judges the answer to a request the fuzzing engine answered (`records`: its answers to it, retry last). */
function judgeEngineAnswer(response: ParsedResponse, records: readonly AnswerRecord[], requestId: string): string | undefined {
  const last = records[records.length - 1] as AnswerRecord;
  const { expect, answer } = last;
  const what = `engine answer ${JSON.stringify({ ...answer, payload: answer.payload.kind })}`;
  if (isRouterError(response)) {
    const problem = routerErrorProblem(response, 'POST');
    if (problem !== undefined) return `router answer ${response.status} is not an OpenAI error: ${problem}`;
    return expect.mayFail ? undefined : `router error ${response.status} for a well-formed ${what}`;
  }
  if (response.status !== answer.status) return `client got ${response.status} for ${what}`;
  const ids = response.headers.filter(([name]) => name === 'x-request-id').map(([, value]) => value);
  if (ids.length !== 1 || ids[0] !== requestId) return `x-request-id ${JSON.stringify(ids)} instead of the router's one: ${what}`;
  const hopByHop = response.headers.find(([name]) => ['upgrade', 'proxy-authenticate', 'trailer'].includes(name));
  if (hopByHop !== undefined) return `hop-by-hop header ${hopByHop[0]} passed through: ${what}`;
  if (!response.complete) return expect.mayFail ? undefined : `cut after ${response.body.length} bytes: ${what}`;
  if (expect.exact !== undefined && response.body.equals(expect.exact)) return undefined;
  if (!expect.mayFail) return `body changed (${response.body.length} bytes, engine sent ${expect.exact?.length}): ${what}`;
  if (expect.exact === undefined || isCutStream(response.body, expect.payload) || expect.payload.subarray(0, response.body.length).equals(response.body)) return undefined;
  return `body neither the engine's nor a cut of it (${response.body.length} bytes): ${what}`;
}

function report(t: TestContext, phase: string, details: fc.RunDetails<[unknown]>, tally: Tally, reached: string, livez: LivezReport, elapsedMs: number): void {
  t.diagnostic(`${phase}: seed ${SEED}, ${details.numRuns} runs in ${(elapsedMs / 1000).toFixed(1)} s (replay: SWITCHYARD_FUZZ_SEED=${SEED})`);
  t.diagnostic(`${phase}: ${tally.requests} requests; reached an engine: ${reached}`);
  t.diagnostic(`${phase}: outcomes: ${Tally.line(tally.statuses)}`);
  t.diagnostic(`${phase}: kinds: ${Tally.line(tally.kinds)}`);
  t.diagnostic(`${phase}: admin /livez: ${livez.samples} samples, worst ${livez.worstMs.toFixed(0)} ms, failures ${livez.failures.length}`);
}

function failure(details: fc.RunDetails<[unknown]>, router: WatchedRouter): string | undefined {
  if (!details.failed) return undefined;
  const example = compact(details.counterexample);
  return [
    `fuzz failure after ${details.numRuns} runs: ${String((details.errorInstance as Error | null)?.message ?? details.errorInstance)}`,
    `replay: SWITCHYARD_FUZZ_SEED=${details.seed} SWITCHYARD_FUZZ_PATH=${details.counterexamplePath}`,
    `input: ${example}`,
    `router stderr tail: ${router.stderrTail.slice(-2_000)}`,
  ].join('\n');
}

const params = (): fc.Parameters<[unknown]> => ({
  seed: SEED,
  numRuns: 1_000_000,
  endOnFailure: true, // shrinking against a live process whose state the failure changed proves little
  plugins: [fc.interruptAfterTimeLimit(SECONDS * 1_000)],
  ...(REPLAY_PATH === undefined ? {} : { path: REPLAY_PATH }),
});

test('fuzz: hostile client requests never crash the router, stall its liveness, or get an answer outside the contract', { timeout: (SECONDS + 60) * 1_000 }, async (t) => {
  const sims = [1, 2].map((seed) => new EngineSimulator({ model: SIM_MODEL, seed, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 4 } }));
  for (const sim of sims) await sim.listen();
  const router = await WatchedRouter.start(
    sims.map((sim) => sim.url),
    ['--timeouts-response-ms', '4000', '--timeouts-stream-first-byte-ms', '4000', '--timeouts-stream-chunk-gap-ms', '3000'],
    [SIM_MODEL],
  );
  const tally = new Tally();
  let counter = 0;
  let inFlight: Promise<unknown> = Promise.resolve();
  const started = performance.now();
  try {
    const details = await fc.check(
      fc.asyncProperty(fc.array(requestArb(SIM_MODEL), { minLength: 1, maxLength: 4 }), async (batch) => {
        router.assertAlive();
        const run = Promise.all(batch.map((spec) => exchangeHostile(spec, `fz1-${++counter}`, router.process.traffic, sims)));
        inFlight = run;
        const results = await run;
        const problems: string[] = [];
        for (const [i, result] of results.entries()) {
          if (result === undefined) continue;
          tally.count((batch[i] as RequestSpec).kind, result.outcome);
          if (result.problem !== undefined) problems.push(`request ${i} (${(batch[i] as RequestSpec).kind}): ${result.problem}${KEEP_GOING ? `; request: ${compact(batch[i], 1_000)}` : ''}`);
        }
        router.assertAlive();
        tally.violate(problems);
      }),
      params(),
    );
    await inFlight.catch(() => {});
    const elapsedMs = performance.now() - started;
    const reachedCount = sims.reduce((sum, sim) => sum + sim.requests, 0);
    const exited = router.exited;
    const livez = await router.stop();
    report(t, 'requests', details, tally, `${reachedCount} (${((100 * reachedCount) / Math.max(1, tally.requests)).toFixed(0)}%; simulators: ${sims.map((sim) => sim.requests).join(' + ')})`, livez, elapsedMs);
    assert.equal(failure(details, router), undefined);
    assert.equal(tally.violationCount, 0, `contract violations (keep-going mode), by kind:\n${tally.violationReport()}`);
    assert.equal(exited, undefined, 'the router process kept running');
    assert.deepEqual(livez.failures, [], 'admin /livez answered 200 throughout');
    assert.ok(livez.worstMs < 1_000, `admin /livez answered within the kubelet's 1 s default: worst ${livez.worstMs.toFixed(0)} ms`);
    assert.ok(reachedCount >= 0.3 * tally.requests, `at least 30% of the requests got past validation to an engine: ${reachedCount} of ${tally.requests}`);
  } finally {
    await router.stop();
    await Promise.all(sims.map((sim) => sim.close()));
  }
});

test('fuzz: engine answers, scrapes and model lists of any shape never crash the router, stall its liveness, or reach a client altered', { timeout: (SECONDS + 60) * 1_000 }, async (t) => {
  const sim = new EngineSimulator({ model: SIM_MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 4 } });
  await sim.listen();
  const engine = new FuzzingEngine(FUZZ_MODEL, 2); // two listeners: a reset on one can be retried on the other
  await engine.listen();
  const router = await WatchedRouter.start(
    [...engine.urls, sim.url],
    [
      '--scrape-interval-ms', '100', '--scrape-timeout-ms', '500', '--scrape-max-bytes', '65536',
      // A fuzzed model list without the model unlists it until the next good one; while it lasts, runs end
      // in fast 404s, so short refreshes keep those bursts from filling the run.
      '--models-refresh-interval-ms', '150', '--models-refresh-retry-ms', '100', '--models-refresh-timeout-ms', '1000',
      // Fuzzed 5xx answers eject the engine; short ejections keep the run exercising forwarding.
      '--load-ejection-base-ms', '500', '--load-ejection-max-ms', '2000',
      // A hanging engine costs the run this long (a 504); the slowest trickle generated takes 400 ms.
      '--timeouts-response-ms', '1500', '--timeouts-stream-first-byte-ms', '1500', '--timeouts-stream-chunk-gap-ms', '1000',
      // A fuzzed scrape can show the engine full for a whole run, and a request then waits in the router
      // queue: its deadline (30 s by default) must end the wait within the answer deadline.
      '--admission-queue-max-wait-ms', '3000',
    ],
    [SIM_MODEL, FUZZ_MODEL],
  );
  const tally = new Tally();
  let counter = 0;
  let inFlight: Promise<unknown> = Promise.resolve();
  const started = performance.now();
  const requestArbs = fc.oneof({ weight: 4, arbitrary: validRequestArb(FUZZ_MODEL) }, { weight: 1, arbitrary: validRequestArb(SIM_MODEL) });
  const runArb = fc.record({
    requests: fc.array(fc.tuple(requestArbs, inferenceAnswerArb, inferenceAnswerArb), { minLength: 1, maxLength: 4 }),
    metrics: fc.array(metricsAnswerArb(FUZZ_MODEL), { maxLength: 3 }),
    models: fc.array(modelsAnswerArb(FUZZ_MODEL), { maxLength: 2 }),
  });
  try {
    const details = await fc.check(
      fc.asyncProperty(runArb, async ({ requests, metrics, models }) => {
        router.assertAlive();
        engine.setScrapeAnswers(metrics, models);
        const run = Promise.all(
          requests.map(async ([spec, first, retry]) => {
            const id = `fz2-${++counter}`;
            engine.script(id, [first, retry]);
            const result = await httpExchange(`${router.base}${spec.path}`, {
              method: 'POST',
              headers: [...spec.headers.flat(), 'x-request-id', id],
              body: renderBody(spec.body),
              deadlineMs: ANSWER_DEADLINE_MS,
            });
            const records = engine.answered.get(id);
            const kind = records !== undefined ? 'valid:fuzzing-engine' : sim.received(id) !== undefined ? 'valid:simulator' : 'valid:not-forwarded';
            const reached = kind !== 'valid:not-forwarded';
            switch (result.kind) {
              case 'refused':
                return { kind, reached, outcome: 'refused', problem: `the client refused a valid request: ${result.reason}` };
              case 'deadline':
                return { kind, reached, outcome: 'no answer', problem: `no answer within ${ANSWER_DEADLINE_MS} ms` };
              case 'no-response':
                return { kind, reached, outcome: 'closed', problem: `connection closed without an answer (${result.reason})${records === undefined ? '' : `; engine answers: ${JSON.stringify(records.map((r) => ({ ...r.answer, payload: r.answer.payload.kind })))}`}` };
              case 'response':
                return {
                  kind,
                  reached,
                  outcome: outcomeOf(result.response),
                  problem: records === undefined ? judgeRouterOrSimulator(result.response, 'POST', spec.path, id, [sim]) : judgeEngineAnswer(result.response, records, id),
                };
            }
          }),
        );
        inFlight = run;
        const results = await run;
        const problems: string[] = [];
        for (const [i, result] of results.entries()) {
          tally.count(result.kind, result.outcome, result.reached);
          if (result.problem !== undefined) problems.push(`request ${i}: ${result.problem}`);
        }
        router.assertAlive();
        tally.violate(problems);
      }),
      params(),
    );
    await inFlight.catch(() => {});
    const elapsedMs = performance.now() - started;
    const reachedCount = tally.reached;
    const exited = router.exited;
    const livez = await router.stop();
    report(t, 'engine answers', details, tally, `${reachedCount} (${((100 * reachedCount) / Math.max(1, tally.requests)).toFixed(0)}%; requests received: fuzzing engine ${engine.hits} incl. retries, simulator ${sim.requests})`, livez, elapsedMs);
    t.diagnostic(`engine answers: fuzzed scrapes answered: /metrics ${engine.scrapes.metrics}, /v1/models ${engine.scrapes.models}`);
    assert.equal(failure(details, router), undefined);
    assert.equal(tally.violationCount, 0, `contract violations (keep-going mode), by kind:\n${tally.violationReport()}`);
    assert.equal(exited, undefined, 'the router process kept running');
    assert.deepEqual(livez.failures, [], 'admin /livez answered 200 throughout');
    assert.ok(livez.worstMs < 1_000, `admin /livez answered within the kubelet's 1 s default: worst ${livez.worstMs.toFixed(0)} ms`);
    assert.ok(reachedCount >= 0.3 * tally.requests, `at least 30% of the requests reached an engine: ${reachedCount} of ${tally.requests}`);
  } finally {
    await router.stop();
    await engine.close();
    await sim.close();
  }
});

/**
 * The overload scenario (`npm run bench:overload`): small slow engines
 * (max-seqs 4, 4 and 64, ~1 s per answer) and a large fast one (~100 ms)
 * offered three times what they can serve through one router with its
 * default admission, and with the fixed settings it replaced for contrast,
 * from the same arrival schedule. Then the seed report's burst, 10,000
 * non-streaming requests at 2,000 concurrency against engines that drain it
 * in ~16 s, with the defaults and with shedding at once. `/livez` is sampled
 * from a separate process throughout.
 *
 *   npm run bench:overload -- [--duration-s 60] [--quick]
 */
import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { canPin, deprioritiseSelf, waitForModels } from '../../tests/kit/processes.ts';
import { spawnSwitchyard, type SwitchyardProcess } from '../../tests/kit/router-process.ts';
import { summarize } from '../bench/stats.ts';
import { closeSimulatedFleet, fleetCapacityPerS, measureServiceMs, startSimulatedFleet, type EngineSpec } from './fleet.ts';
import { overloadBars, overloadMarkdown, overloadVerdict, type BurstResult, type ConnectionBurstResult, type FleetRuns, type OverloadResult, type OverloadRun } from './overload-report.ts';
import { poissonSchedule } from './poisson.ts';
import { sampleProbe } from './livez-probe.ts';
import { type Chart, type ResultsTarget, runFacts, runIfMain, scenarioOptions, writeResults } from './results.ts';
import { lineChart } from '../report/svg-chart.ts';
import { streamChat, type ChatOutcome } from './sse-client.ts';

const MODEL = 'overload-model';
/** The router queue's default deadline (admission.queueMaxWaitMs), which the client-side TTFT bar uses. */
const QUEUE_DEADLINE_MS = 30_000;
/** Small slow engines (4 slots, ~1 s per answer) beside a large one of the same speed: ~150 ms to first token, 25 ms per token, 32 tokens. */
const SLOW_FLEET: readonly EngineSpec[] = [
  { name: 'small-1', maxSeqs: 4, ttftMs: 150, itlMs: 25, outputTokens: 32 },
  { name: 'small-2', maxSeqs: 4, ttftMs: 150, itlMs: 25, outputTokens: 32 },
  { name: 'large', maxSeqs: 64, ttftMs: 150, itlMs: 25, outputTokens: 32 },
];
/**
 * A large fast engine, ~100 ms per answer. 16 slots rather than 256: three
 * times what 256 such slots serve (~7,700 streams a second) is more than the
 * 2-core measuring machine can offer while also running the router; at 32
 * slots (~900 arrivals a second) the load generator, which also runs the
 * engines, fell behind (engines 78% busy, its own lag in every TTFT).
 */
const FAST_FLEET: readonly EngineSpec[] = [{ name: 'fast', maxSeqs: 16, ttftMs: 20, itlMs: 5, outputTokens: 16 }];
/** The crash report's burst against two 64-slot engines that drain 10,000 requests in ~16 s. */
const BURST_FLEET: readonly EngineSpec[] = [
  { name: 'burst-1', maxSeqs: 64, ttftMs: 50, itlMs: 10, outputTokens: 16 },
  { name: 'burst-2', maxSeqs: 64, ttftMs: 50, itlMs: 10, outputTokens: 16 },
];
/** Shedding at once: no router queue, a fixed engine queue. */
const SHED_AT_ONCE = (maxWaiting: number) => ['--admission-max-waiting', String(maxWaiting), '--admission-queue-length', '0'];
/** Shedding off: the router forwards everything and no endpoint ever counts as saturated. */
const SHEDDING_OFF = ['--admission-max-waiting', '1000000000', '--admission-kv-cache-threshold', '1', '--admission-queue-length', '0'];

interface Options extends ResultsTarget {
  readonly durationS: number;
  readonly warmupS: number;
  readonly burstRequests: number;
  readonly burstConcurrency: number;
  /** How long /livez is sampled from the start of a burst (the full burst drains in ~16 s). */
  readonly burstProbeS: number;
  /** New connections opened within one second, one request each, against the small slow engines. */
  readonly connectionBurst: number;
  /** Parts to run (`slow`, `fast`, `burst`); all by default. A partial run writes no verdict. */
  readonly only: ReadonlySet<string> | undefined;
}

function options(argv: readonly string[]): Options {
  // Smoke runs (CI) are quick runs too: short, and only the correctness bars decide the exit code (speed on a shared CI machine proves nothing).
  const { quick, smoke, out, extra } = scenarioOptions(argv, 'overload');
  return {
    quick,
    smoke,
    out,
    // A smoke run checks correctness only (no 5xx, no resets, only 200 or 429): 4 s at 3× with the
    // warm-up already queue ~10 s of work, and every second more adds two to wait for.
    durationS: Number(extra['duration-s'] ?? (smoke ? 2 : quick ? 8 : 60)),
    // Until an engine has been seen full the router does not know its capacity (vLLM does not export
    // max-num-seqs): the safe start feels its way up over the first scrape intervals (250 ms here).
    // A smoke run checks correctness only, so 2 s of it do.
    warmupS: smoke ? 2 : 5,
    burstRequests: quick ? 2_000 : 10_000,
    burstConcurrency: quick ? 500 : 2_000,
    burstProbeS: smoke ? 6 : 25,
    // The slow engines serve ~60 of them a second and the router queue holds the rest: 3,000 take
    // ~35 s to answer, a third of them as much of the same accept and admission paths in a third.
    connectionBurst: smoke ? 1_000 : 3_000,
    only: extra.only === undefined ? undefined : new Set(extra.only.split(',')),
  };
}

async function startRouter(backends: readonly string[], admission: readonly string[], pinned: boolean): Promise<SwitchyardProcess> {
  const args = ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--scrape-interval-ms', '250', ...admission];
  for (const url of backends) args.push('--backend', url);
  const router = await spawnSwitchyard(args, { core: pinned ? 0 : undefined });
  await waitForModels(`http://127.0.0.1:${router.ports['traffic'] as number}`);
  return router;
}

/** What one run is: its name, the fleet, the offered rate and the router's admission flags. */
interface RunPlan {
  readonly name: string;
  readonly fleet: readonly EngineSpec[];
  readonly ratePerS: number;
  readonly admission: readonly string[];
  readonly withProbe: boolean;
}

/** Plays the plan's streaming arrivals, sampling the engines every 100 ms. */
async function play(plan: RunPlan, opts: Options, pinned: boolean): Promise<OverloadRun> {
  const engines = await startSimulatedFleet(MODEL, plan.fleet);
  const router = await startRouter(engines.map((e) => e.url), plan.admission, pinned);
  const lengthMs = (opts.warmupS + opts.durationS) * 1000;
  const schedule = poissonSchedule({ ratePerS: plan.ratePerS, lengthMs, sessionShare: 0, sessions: 1, seed: 42 });
  const pool = new Pool(`http://127.0.0.1:${router.ports['traffic'] as number}`, { connections: 4_096, pipelining: 1 });
  const probe = plan.withProbe ? sampleProbe(`http://127.0.0.1:${router.ports['admin'] as number}/livez`, opts.warmupS + opts.durationS) : Promise.resolve([]);
  const samples: { at: number; running: number[]; waiting: number[] }[] = [];
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const start = performance.now();
  const sampler = setInterval(() => {
    samples.push({ at: performance.now() - start, running: engines.map((e) => e.scheduler.running), waiting: engines.map((e) => e.scheduler.waiting) });
  }, 100);
  // Engine-side first tokens count from the end of the warm-up.
  const warmupEnd = setTimeout(() => engines.forEach((e) => e.resetEngineTtft()), opts.warmupS * 1000);
  const records: { sentAt: number; outcome: ChatOutcome }[] = [];
  const inFlight: Promise<void>[] = [];
  for (const arrival of schedule) {
    const wait = start + arrival.atMs - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const sentAt = performance.now();
    inFlight.push(streamChat(pool, { model: MODEL, requestId: `${plan.name}-${arrival.index}`, sessionKey: undefined, turn: 1 }).then((outcome) => void records.push({ sentAt: sentAt - start, outcome })));
  }
  await Promise.all(inFlight);
  clearInterval(sampler);
  clearTimeout(warmupEnd);
  const engineTtft = engines.flatMap((e) => [...e.engineTtftMs]);
  const probeLatencies = await probe;
  loopDelay.disable();
  const routerShed = await shedDurations(`http://127.0.0.1:${router.ports['admin'] as number}`);
  await pool.close();
  await router.stop();
  await closeSimulatedFleet(engines);
  const warm = opts.warmupS * 1000;
  const measured = records.filter((r) => r.sentAt >= warm);
  const served = measured.filter((r) => r.outcome.error === undefined);
  const shed = measured.filter((r) => r.outcome.shed);
  const shedMs = shed.map((r) => r.outcome.endedAt - (r.sentAt + start));
  const windowSamples = samples.filter((s) => s.at >= warm && s.at < lengthMs);
  return {
    name: plan.name,
    admission: plan.admission,
    offeredPerS: plan.ratePerS,
    requests: measured.length,
    served: served.length,
    shed: shed.length,
    shedAtOnce: shedMs.filter((ms) => ms <= 5).length,
    routerShed,
    generatorLagP99Ms: loopDelay.percentile(99) / 1e6,
    routerErrors5xx: measured.filter((r) => r.outcome.status >= 500).length,
    resets: measured.filter((r) => r.outcome.status === 0).length,
    otherErrors: measured.filter((r) => r.outcome.error !== undefined && !r.outcome.shed && r.outcome.status !== 0 && r.outcome.status < 500).length,
    servedPerS: served.length / opts.durationS,
    ttftMs: summarize(served.map((r) => (r.outcome.firstDataAt ?? r.outcome.endedAt) - (r.sentAt + start))),
    engineTtftMs: summarize(engineTtft),
    shedAnswerMs: summarize(shedMs),
    meanRunning: plan.fleet.map((_, i) => windowSamples.reduce((sum, s) => sum + (s.running[i] as number), 0) / Math.max(1, windowSamples.length)),
    peakWaiting: plan.fleet.map((_, i) => Math.max(0, ...windowSamples.map((s) => s.waiting[i] as number))),
    livezMs: plan.withProbe ? summarize(probeLatencies.filter((ms) => ms >= 0)) : undefined,
    livezFailures: probeLatencies.filter((ms) => ms < 0).length,
    // Every 500 ms is enough for a chart and keeps the JSON small.
    queueDepth: samples.filter((_, i) => i % 5 === 0).map((s) => ({ atS: s.at / 1000, waiting: s.waiting })),
  };
}

/** The router's 429s by its own clock: all of them, and those answered within 5 ms of arrival. */
async function shedDurations(admin: string): Promise<OverloadRun['routerShed']> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const read = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return { total: read(/^switchyard_shed_duration_seconds_count (\S+)$/m), within5ms: read(/^switchyard_shed_duration_seconds_bucket\{le="0\.005"\} (\S+)$/m) };
}

/** Each engine's waiting queue over one run, as a chart. */
function queueChart(fleet: readonly EngineSpec[], run: OverloadRun, slug: string): Chart {
  return {
    name: `queues-${slug}`,
    svg: lineChart({
      title: `Engine queues at 3× capacity: ${run.name}`,
      xLabel: 'seconds (warm-up included)',
      yLabel: 'requests waiting in the engine',
      series: fleet.map((engine, i) => ({ name: `${engine.name} (${engine.maxSeqs} slots)`, points: run.queueDepth.map((s) => [s.atS, s.waiting[i] as number] as const) })),
    }),
  };
}

/** The unloaded, defaults and contrast runs on one fleet. */
async function fleetRuns(label: string, fleet: readonly EngineSpec[], contrast: readonly { name: string; admission: readonly string[] }[], opts: Options, pinned: boolean): Promise<FleetRuns> {
  const calibration = await startSimulatedFleet(MODEL, fleet);
  const serviceMs = await measureServiceMs(calibration, MODEL, opts.smoke ? 2 : 5);
  await closeSimulatedFleet(calibration);
  const capacity = fleetCapacityPerS(fleet, serviceMs);
  console.error(`${label}: capacity ≈ ${capacity.toFixed(1)} req/s (service times ${serviceMs.map((ms) => ms.toFixed(0)).join('/')} ms)`);
  const log = (run: OverloadRun) =>
    console.error(`${label}, ${run.name}: served ${run.servedPerS.toFixed(1)}/s, shed ${run.shed}, client TTFT p99 ${run.ttftMs.p99.toFixed(0)} ms, engine TTFT p50 ${run.engineTtftMs.p50.toFixed(0)} / p99 ${run.engineTtftMs.p99.toFixed(0)} ms, running ${run.meanRunning.map((m) => m.toFixed(1)).join('/')}, peak waiting ${run.peakWaiting.join('/')}, 429 within 5 ms: router ${run.routerShed.within5ms}/${run.routerShed.total}, client ${run.shedAtOnce}/${run.shed} (its loop delay p99 ${run.generatorLagP99Ms.toFixed(1)} ms)`);
  // The unloaded run only sets the speed bars' yardstick, which a smoke run does not decide on.
  const unloadedS = opts.smoke ? 1 : Math.min(opts.durationS, 15);
  const unloaded = await play({ name: 'unloaded (0.2×)', fleet, ratePerS: capacity * 0.2, admission: [], withProbe: false }, { ...opts, durationS: unloadedS }, pinned);
  log(unloaded);
  // A smoke run's 3× load would leave the router queue's 30 s of work to drain after the last
  // arrival, twice (~50 s of CI); its correctness bars (no 5xx or resets, 200 or 429 only) hold
  // the same with a 3 s queue deadline.
  const smokeQueue = opts.smoke ? ['--admission-queue-max-wait-ms', '3000'] : [];
  const defaults = await play({ name: '3× capacity', fleet, ratePerS: capacity * 3, admission: smokeQueue, withProbe: true }, opts, pinned);
  log(defaults);
  const others: OverloadRun[] = [];
  for (const { name, admission } of contrast) {
    const run = await play({ name, fleet, ratePerS: capacity * 3, admission, withProbe: true }, opts, pinned);
    log(run);
    others.push(run);
  }
  return { label, fleet, serviceMs, capacityPerS: capacity, unloaded, defaults, contrast: others };
}

/** The seed report: N non-streaming requests, C at a time, through one router. */
async function burst(name: string, admission: readonly string[], opts: Options, pinned: boolean): Promise<BurstResult> {
  const engines = await startSimulatedFleet(MODEL, BURST_FLEET);
  const router = await startRouter(engines.map((e) => e.url), admission, pinned);
  const pool = new Pool(`http://127.0.0.1:${router.ports['traffic'] as number}`, { connections: opts.burstConcurrency, pipelining: 1 });
  const probe = sampleProbe(`http://127.0.0.1:${router.ports['admin'] as number}/livez`, opts.burstProbeS);
  const statuses = new Map<string, number>();
  const latencies: number[] = [];
  let next = 0;
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
  const started = performance.now();
  const worker = async () => {
    while (next < opts.burstRequests) {
      next++;
      let key: string;
      const sent = performance.now();
      try {
        const response = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await response.body.dump();
        key = String(response.statusCode);
      } catch (err) {
        key = (err as NodeJS.ErrnoException).code ?? 'error';
      }
      latencies.push(performance.now() - sent);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: opts.burstConcurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const routerAlive = router.child.exitCode === null;
  const livez = await probe;
  await pool.close();
  await router.stop();
  await closeSimulatedFleet(engines);
  return {
    name,
    admission,
    requests: opts.burstRequests,
    concurrency: opts.burstConcurrency,
    seconds,
    statuses: Object.fromEntries(statuses),
    latencyMs: summarize(latencies),
    routerAlive,
    livezMs: summarize(livez.filter((ms) => ms >= 0)),
    livezFailures: livez.filter((ms) => ms < 0).length,
  };
}

/** Sends one request on a new connection (Connection: close); resolves with its status or the socket error. */
function oneShot(port: number, body: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`),
    );
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.on('close', () => resolve(text.slice(9, 12) || 'closed without an answer'));
  });
}

/** 3,000 new connections within one second, each with one request, while /livez is sampled from another process. */
async function connectionBurst(count: number, pinned: boolean): Promise<ConnectionBurstResult> {
  const engines = await startSimulatedFleet(MODEL, SLOW_FLEET);
  const router = await startRouter(engines.map((e) => e.url), [], pinned);
  const port = router.ports['traffic'] as number;
  const probe = sampleProbe(`http://127.0.0.1:${router.ports['admin'] as number}/livez`, 4);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
  const outcomes: Promise<string>[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    // Spread the opens evenly over one second.
    const due = started + (i * 1000) / count - performance.now();
    if (due > 1) await new Promise((resolve) => setTimeout(resolve, due));
    outcomes.push(oneShot(port, body));
  }
  const statuses: Record<string, number> = {};
  for (const outcome of await Promise.all(outcomes)) statuses[outcome] = (statuses[outcome] ?? 0) + 1;
  const livez = await probe;
  const routerAlive = router.child.exitCode === null;
  await router.stop();
  await closeSimulatedFleet(engines);
  return { connections: count, statuses, routerAlive, livezMs: summarize(livez.filter((ms) => ms >= 0)), livezFailures: livez.filter((ms) => ms < 0).length };
}

/** Entry point; returns the exit code (1 when the verdict fails). */
export async function overload(argv: readonly string[]): Promise<number> {
  const opts = options(argv);
  const pinned = canPin();
  // This process is the clients (and the engines); the router and the /livez probe run at normal priority.
  const restorePriority = deprioritiseSelf();
  try {
    return await runOverload(argv, opts, pinned);
  } finally {
    restorePriority();
  }
}

async function runOverload(argv: readonly string[], opts: Options, pinned: boolean): Promise<number> {
  if (opts.only !== undefined) return partial(opts, pinned);
  // A smoke run checks the defaults' correctness bars only: the contrast runs (other admission
  // settings, for the report) and the second burst add minutes and no bar it decides on.
  const slow = await fleetRuns('Small slow engines', SLOW_FLEET, opts.smoke ? [] : [
    { name: '3×, maxWaiting 0, no router queue', admission: SHED_AT_ONCE(0) },
    { name: '3×, maxWaiting 5, no router queue (the former default)', admission: SHED_AT_ONCE(5) },
    { name: '3×, shedding off', admission: SHEDDING_OFF },
  ], opts, pinned);
  const fast = await fleetRuns('A large fast engine', FAST_FLEET, opts.smoke ? [] : [{ name: '3×, maxWaiting 5, no router queue (the former default)', admission: SHED_AT_ONCE(5) }], opts, pinned);
  const bursts: BurstResult[] = [];
  const burstVariants = [['defaults', []], ['shedding at once (maxWaiting 5, no router queue: the former default)', SHED_AT_ONCE(5)]] as const;
  for (const [name, admission] of opts.smoke ? burstVariants.slice(0, 1) : burstVariants) {
    const result = await burst(name, admission, opts, pinned);
    console.error(`burst, ${name}: ${JSON.stringify(result.statuses)} in ${result.seconds.toFixed(1)} s, p50 ${result.latencyMs.p50.toFixed(0)} ms`);
    bursts.push(result);
  }
  const connections = await connectionBurst(opts.connectionBurst, pinned);
  console.error(`connection burst: ${JSON.stringify(connections.statuses)}, /livez p99 ${connections.livezMs.p99.toFixed(1)} ms`);
  const facts = runFacts(`npm run bench:overload -- ${argv.join(' ')}`.trim());
  const result: OverloadResult = { facts, queueDeadlineMs: QUEUE_DEADLINE_MS, fleets: [slow, fast], burstFleet: BURST_FLEET, bursts, connections };
  const verdict = overloadVerdict(result);
  const bars = overloadBars(verdict.checks);
  const md = `${overloadMarkdown(result, bars.markdown(opts))}\n\nCharts: \`overload-queues-*.svg\` (each engine's waiting queue over the run).`;
  const { facts: _facts, ...data } = result;
  const charts = [
    queueChart(SLOW_FLEET, slow.defaults, 'slow-defaults'),
    ...slow.contrast.map((run, i) => queueChart(SLOW_FLEET, run, `slow-contrast-${i + 1}`)),
    queueChart(FAST_FLEET, fast.defaults, 'fast-defaults'),
  ];
  writeResults(opts, 'overload', facts, { ...data, verdict }, md, charts);
  // A smoke run: only the correctness bars decide (Bars), since speed on a shared CI machine proves nothing.
  return bars.pass(opts) ? 0 : 1;
}

/** Only the parts `--only` names, logged and not judged: for looking into one of them. */
async function partial(opts: Options, pinned: boolean): Promise<number> {
  if (opts.only?.has('slow')) await fleetRuns('Small slow engines', SLOW_FLEET, [], opts, pinned);
  if (opts.only?.has('fast')) await fleetRuns('A large fast engine', FAST_FLEET, [], opts, pinned);
  if (opts.only?.has('burst')) {
    const result = await burst('defaults', [], opts, pinned);
    console.error(`burst, defaults: ${JSON.stringify(result.statuses)} in ${result.seconds.toFixed(1)} s, p50 ${result.latencyMs.p50.toFixed(0)} ms`);
  }
  return 0;
}

runIfMain(import.meta.url, overload);

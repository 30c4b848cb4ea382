/**
 * The overload scenario (`npm run bench:overload`): three engines (max-seqs
 * 4, 4 and 64) offered three times what they can serve, through one router,
 * with shedding on and then off, from the same arrival schedule. Then the
 * seed report's burst: 10,000 non-streaming requests at 2,000 concurrency.
 * `/livez` is sampled from a separate process throughout.
 *
 *   npm run bench:overload -- [--duration-s 60] [--quick]
 */
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { canPin, deprioritiseSelf, startSwitchyard, waitForModels, type Started } from '../bench/processes.ts';
import { summarize } from '../bench/stats.ts';
import { closeFleet, fleetCapacityPerS, measureServiceMs, startFleet, type EngineSpec } from './fleet.ts';
import { overloadMarkdown, overloadVerdict, type BurstResult, type ConnectionBurstResult, type OverloadRun } from './overload-report.ts';
import { poissonSchedule } from './poisson.ts';
import { sampleProbe } from './livez-probe.ts';
import { type Chart, runFacts, runIfMain, writeResults } from './results.ts';
import { lineChart } from '../report/svg-chart.ts';
import { streamChat, type ChatOutcome } from './sse-client.ts';

const MODEL = 'overload-model';
/**
 * The verdict's run admits only into free batch slots (`maxWaiting` 0): with
 * 4-slot engines that take a second per request, every queued request waits
 * ~250 ms per request ahead of it, which alone breaks the 2× TTFT bar. The
 * default (5) is run too, for contrast.
 */
const MAX_WAITING = 0;
const DEFAULT_MAX_WAITING = 5;
/** Realistic engine timing: ~150 ms to first token, 25 ms per token, 32 tokens. */
const FLEET: readonly EngineSpec[] = [
  { name: 'small-1', maxSeqs: 4, ttftMs: 150, itlMs: 25, outputTokens: 32 },
  { name: 'small-2', maxSeqs: 4, ttftMs: 150, itlMs: 25, outputTokens: 32 },
  { name: 'large', maxSeqs: 64, ttftMs: 150, itlMs: 25, outputTokens: 32 },
];

interface Options {
  readonly durationS: number;
  readonly warmupS: number;
  readonly burstRequests: number;
  readonly burstConcurrency: number;
  readonly out: string;
  /** CI: short runs, and only the correctness bars decide the exit code (speed on a shared CI machine proves nothing). */
  readonly smoke: boolean;
}

function options(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: { 'duration-s': { type: 'string' }, quick: { type: 'boolean', default: false }, smoke: { type: 'boolean', default: false }, quiet: { type: 'boolean', default: false }, out: { type: 'string' } },
  });
  const quick = values.quick === true || values.smoke === true;
  return {
    durationS: Number(values['duration-s'] ?? (quick ? 8 : 60)),
    // Until an engine has been seen full the router does not know its capacity (vLLM does not export
    // max-num-seqs), so the first scrape intervals overfill the small engines; their queues take
    // a few seconds to drain. Configured capacity (load.capacity, a pod annotation) avoids that.
    warmupS: 5,
    burstRequests: quick ? 2_000 : 10_000,
    burstConcurrency: quick ? 500 : 2_000,
    out: values.out ?? fileURLToPath(new URL('../results', import.meta.url)),
    smoke: values.smoke === true,
  };
}

async function startRouter(backends: readonly string[], maxWaiting: number | 'off', pinned: boolean): Promise<Started> {
  const args = ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--scrape-interval-ms', '250'];
  if (maxWaiting !== 'off') args.push('--admission-max-waiting', String(maxWaiting));
  // "Off" means the router forwards everything: no endpoint ever counts as saturated.
  else args.push('--admission-max-waiting', '1000000000', '--admission-kv-cache-threshold', '1');
  for (const url of backends) args.push('--backend', url);
  const router = await startSwitchyard(args, 'switchyard listening', pinned ? 0 : undefined);
  await waitForModels(`http://127.0.0.1:${router.ports['traffic'] as number}`);
  return router;
}

/** Plays `ratePerS` streaming arrivals for the run, sampling the engines every 100 ms. */
async function play(name: string, ratePerS: number, opts: Options, maxWaiting: number | 'off', pinned: boolean, withProbe: boolean): Promise<OverloadRun> {
  const engines = await startFleet(MODEL, FLEET);
  const router = await startRouter(engines.map((e) => e.url), maxWaiting, pinned);
  const lengthMs = (opts.warmupS + opts.durationS) * 1000;
  const schedule = poissonSchedule({ ratePerS, lengthMs, sessionShare: 0, sessions: 1, seed: 42 });
  const pool = new Pool(`http://127.0.0.1:${router.ports['traffic'] as number}`, { connections: 4_096, pipelining: 1 });
  const probe = withProbe ? sampleProbe(`http://127.0.0.1:${router.ports['admin'] as number}/livez`, opts.warmupS + opts.durationS) : Promise.resolve([]);
  const samples: { at: number; running: number[]; waiting: number[] }[] = [];
  const start = performance.now();
  const sampler = setInterval(() => {
    samples.push({ at: performance.now() - start, running: engines.map((e) => e.scheduler.running), waiting: engines.map((e) => e.scheduler.waiting) });
  }, 100);
  const records: { sentAt: number; outcome: ChatOutcome }[] = [];
  const inFlight: Promise<void>[] = [];
  for (const arrival of schedule) {
    const wait = start + arrival.atMs - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const sentAt = performance.now();
    inFlight.push(streamChat(pool, { model: MODEL, requestId: `${name}-${arrival.index}`, sessionKey: undefined, turn: 1 }).then((outcome) => void records.push({ sentAt: sentAt - start, outcome })));
  }
  await Promise.all(inFlight);
  clearInterval(sampler);
  const probeLatencies = await probe;
  await pool.close();
  await router.stop();
  await closeFleet(engines);
  const warm = opts.warmupS * 1000;
  const measured = records.filter((r) => r.sentAt >= warm);
  const served = measured.filter((r) => r.outcome.error === undefined);
  const shed = measured.filter((r) => r.outcome.shed);
  const windowSamples = samples.filter((s) => s.at >= warm && s.at < lengthMs);
  return {
    name,
    maxWaitingSetting: maxWaiting,
    offeredPerS: ratePerS,
    requests: measured.length,
    served: served.length,
    shed: shed.length,
    routerErrors5xx: measured.filter((r) => r.outcome.status >= 500).length,
    resets: measured.filter((r) => r.outcome.status === 0).length,
    otherErrors: measured.filter((r) => r.outcome.error !== undefined && !r.outcome.shed && r.outcome.status !== 0 && r.outcome.status < 500).length,
    servedPerS: served.length / opts.durationS,
    ttftMs: summarize(served.map((r) => (r.outcome.firstDataAt ?? r.outcome.endedAt) - (r.sentAt + start))),
    shedAnswerMs: summarize(shed.map((r) => r.outcome.endedAt - (r.sentAt + start))),
    meanRunning: FLEET.map((_, i) => windowSamples.reduce((sum, s) => sum + (s.running[i] as number), 0) / Math.max(1, windowSamples.length)),
    peakWaiting: FLEET.map((_, i) => Math.max(0, ...windowSamples.map((s) => s.waiting[i] as number))),
    livezMs: withProbe ? summarize(probeLatencies.filter((ms) => ms >= 0)) : undefined,
    livezFailures: probeLatencies.filter((ms) => ms < 0).length,
    // Every 500 ms is enough for a chart and keeps the JSON small.
    queueDepth: samples.filter((_, i) => i % 5 === 0).map((s) => ({ atS: s.at / 1000, waiting: s.waiting })),
  };
}

/** Each engine's waiting queue over one run, as a chart. */
function queueChart(run: OverloadRun): Chart {
  return {
    name: `queues-${run.maxWaitingSetting === 'off' ? 'shedding-off' : `max-waiting-${run.maxWaitingSetting}`}`,
    svg: lineChart({
      title: `Engine queues at 3× capacity: ${run.name}`,
      xLabel: 'seconds (warm-up included)',
      yLabel: 'requests waiting in the engine',
      series: FLEET.map((engine, i) => ({ name: `${engine.name} (${engine.maxSeqs} slots)`, points: run.queueDepth.map((s) => [s.atS, s.waiting[i] as number] as const) })),
    }),
  };
}

/** The seed report: N non-streaming requests, C at a time, through one router. */
async function burst(opts: Options, pinned: boolean): Promise<BurstResult> {
  const engines = await startFleet(MODEL, FLEET);
  const router = await startRouter(engines.map((e) => e.url), DEFAULT_MAX_WAITING, pinned);
  const pool = new Pool(`http://127.0.0.1:${router.ports['traffic'] as number}`, { connections: opts.burstConcurrency, pipelining: 1 });
  const probe = sampleProbe(`http://127.0.0.1:${router.ports['admin'] as number}/livez`, 15);
  const statuses = new Map<string, number>();
  let next = 0;
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
  const started = performance.now();
  const worker = async () => {
    while (next < opts.burstRequests) {
      next++;
      let key: string;
      try {
        const response = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await response.body.dump();
        key = String(response.statusCode);
      } catch (err) {
        key = (err as NodeJS.ErrnoException).code ?? 'error';
      }
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: opts.burstConcurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const routerAlive = router.child.exitCode === null;
  const livez = await probe;
  await pool.close();
  await router.stop();
  await closeFleet(engines);
  return {
    requests: opts.burstRequests,
    concurrency: opts.burstConcurrency,
    seconds,
    statuses: Object.fromEntries(statuses),
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
async function connectionBurst(pinned: boolean): Promise<ConnectionBurstResult> {
  const engines = await startFleet(MODEL, FLEET);
  const router = await startRouter(engines.map((e) => e.url), DEFAULT_MAX_WAITING, pinned);
  const port = router.ports['traffic'] as number;
  const probe = sampleProbe(`http://127.0.0.1:${router.ports['admin'] as number}/livez`, 4);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
  const outcomes: Promise<string>[] = [];
  const started = performance.now();
  for (let i = 0; i < CONNECTION_BURST; i++) {
    // Spread the opens evenly over one second.
    const due = started + (i * 1000) / CONNECTION_BURST - performance.now();
    if (due > 1) await new Promise((resolve) => setTimeout(resolve, due));
    outcomes.push(oneShot(port, body));
  }
  const statuses: Record<string, number> = {};
  for (const outcome of await Promise.all(outcomes)) statuses[outcome] = (statuses[outcome] ?? 0) + 1;
  const livez = await probe;
  const routerAlive = router.child.exitCode === null;
  await router.stop();
  await closeFleet(engines);
  return { connections: CONNECTION_BURST, statuses, routerAlive, livezMs: summarize(livez.filter((ms) => ms >= 0)), livezFailures: livez.filter((ms) => ms < 0).length };
}

const CONNECTION_BURST = 3_000;

/** Entry point; returns the exit code (1 when the verdict fails). */
export async function overload(argv: readonly string[]): Promise<number> {
  const opts = options(argv);
  const pinned = canPin();
  // This process is the clients (and the engines); the router and the /livez probe run at normal priority.
  deprioritiseSelf();
  const calibration = await startFleet(MODEL, FLEET);
  const serviceMs = await measureServiceMs(calibration, MODEL);
  await closeFleet(calibration);
  const capacity = fleetCapacityPerS(FLEET, serviceMs);
  console.error(`fleet capacity ≈ ${capacity.toFixed(1)} req/s (service times ${serviceMs.map((ms) => ms.toFixed(0)).join('/')} ms)`);
  const unloaded = await play('unloaded', capacity * 0.2, { ...opts, durationS: Math.min(opts.durationS, 15) }, MAX_WAITING, pinned, false);
  console.error(`unloaded: TTFT p99 ${unloaded.ttftMs.p99.toFixed(1)} ms`);
  const on = await play('shedding on, maxWaiting 0', capacity * 3, opts, MAX_WAITING, pinned, true);
  console.error(`shedding on: served ${on.servedPerS.toFixed(1)}/s, shed ${on.shed}, TTFT p99 ${on.ttftMs.p99.toFixed(0)} ms`);
  const onDefault = await play(`shedding on, maxWaiting ${DEFAULT_MAX_WAITING} (default)`, capacity * 3, opts, DEFAULT_MAX_WAITING, pinned, true);
  console.error(`shedding on (default): served ${onDefault.servedPerS.toFixed(1)}/s, TTFT p99 ${onDefault.ttftMs.p99.toFixed(0)} ms`);
  const off = await play('shedding off', capacity * 3, opts, 'off', pinned, true);
  console.error(`shedding off: served ${off.servedPerS.toFixed(1)}/s, TTFT p99 ${off.ttftMs.p99.toFixed(0)} ms`);
  const seed = await burst(opts, pinned);
  console.error(`burst: ${JSON.stringify(seed.statuses)} in ${seed.seconds.toFixed(1)} s`);
  const connections = await connectionBurst(pinned);
  console.error(`connection burst: ${JSON.stringify(connections.statuses)}, /livez p99 ${connections.livezMs.p99.toFixed(1)} ms`);
  const facts = runFacts(`npm run bench:overload -- ${argv.join(' ')}`.trim());
  const result = { facts, fleet: FLEET, serviceMs, capacityPerS: capacity, maxWaiting: MAX_WAITING, unloaded, on, onDefault, off, burst: seed, connections };
  const verdict = overloadVerdict(result);
  const md = `${overloadMarkdown(result, verdict)}\n\nCharts: \`overload-queues-*.svg\` (each engine's waiting queue over the run).`;
  const { facts: _facts, ...data } = result;
  writeResults(opts.out, 'overload', facts, { ...data, verdict }, md, [on, onDefault, off].map(queueChart));
  const decisive = opts.smoke ? verdict.checks.filter((c) => c.correctness) : verdict.checks;
  return decisive.every((c) => c.pass) ? 0 : 1;
}

runIfMain(import.meta.url, overload);

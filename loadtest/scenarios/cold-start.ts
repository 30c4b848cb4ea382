/**
 * `npm run bench -- cold-start`: routers started cold, told nothing about
 * the engines' capacity, hit at once by the crash report's burst
 * (`ab -n 10000 -c 2000`: non-streamed chat, closed loop) against small
 * engines; with 1 and with 3 replicas (behind nginx round-robin, standing in
 * for a Service), without and with a router queue (2,000
 * long, 60 s deadline), and the same again with the engines' true capacity
 * configured. The queued runs then again with the replicas sharing one real
 * Redis (emptied before each run; the burst starts once every replica
 * reports it up), capacity unknown and configured; and capacity unknown with
 * every client sending its own `x-session-id`, without and with Redis, where
 * the session moves the routers counted stand beside the engine changes the
 * engines saw. Every engine's queue is sampled every 100 ms from the first
 * request on (the engines run in this process, so the sample is exact).
 * Then a ramp of 8,000 long streams over 3 s through one router to engines
 * with room for all of them, which lag shedding must not turn away. A smoke
 * run adds only the 3-replica Redis run, capacity unknown.
 *
 *   npm run bench -- cold-start [--quick | --smoke]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { startNginx } from './baselines/nginx.ts';
import { runGenerators, splitSpec, type GeneratorRun } from '../bench/generators.ts';
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { lineChart } from '../report/svg-chart.ts';
import type { EngineSimulator } from '../sim/server.ts';
import { countsCell, engineTrail, redisTable, routerCounts, sessionBars, sessionTable, type EngineTrail, type RouterCounts, type ServedRequest, type SessionRun } from './cold-start-counts.ts';
import { closeSimulatedFleet, startSimulatedFleet, type EngineSpec } from './fleet.ts';
import { startProbe, type ProbeSampler } from './livez-probe.ts';
import { measure } from './measure.ts';
import { Bars, factsLine, ms, pct, runFacts, runIfMain, scenarioOptions, type ScenarioOptions, withoutHistograms, writeResults } from './results.ts';
import { readViews } from './shared-state-rig.ts';
import { fleetAgrees, scrapeMetrics } from './shared-state-prom.ts';
import { flushRedis } from './shared-state-redis.ts';
import { startEngineProcesses, startRouterSystem, stopAll, type System } from './systems.ts';

const MODEL = 'cold-model';
/**
 * Small engines: 8 batch slots, ~0.3 s per answer (100 ms to first token, 16 tokens 10 ms apart).
 * Much shorter answers would spend a good part of their life on the way to and from the engine on
 * this shared two-core machine, where no scrape sees them: real answers take seconds.
 */
const ENGINES: readonly EngineSpec[] = ['A', 'B', 'C'].map((name) => ({ name, maxSeqs: 8, ttftMs: 100, itlMs: 10, outputTokens: 16 }));
const REQUEST: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: false, tools: false, promptBytes: 0, headers: {}, users: 0, checkIds: true };
const MAX_WAITING = 5;
const SCRAPE_MS = 250;
/**
 * The router queue of the queued runs. 2,000 closed-loop clients against engines that finish ~80
 * requests a second keep ~25 s of work queued: 83% of the default 30 s deadline, past the 80% the
 * admission gate lets the queue fill, so a 30 s deadline sheds the margin by design (1,415 of
 * 10,000 at once and 315 at the deadline with three replicas). A 60 s deadline puts the burst well
 * inside it, so "served whole" tests the cold start, not the gate.
 */
const QUEUE = ['--admission-queue-length', '2000', '--admission-queue-max-wait-ms', '60000'];
const RAMP_MODEL = 'ramp-model';
/** Load-generator processes of a burst. */
const GENERATORS = 2;
/** Connecting, the first publish and the first fleet read take well under this on loopback. */
const SHARED_STATE_UP_MS = 5_000;
/** The 3-replica queued runs with Redis serve at least this share of what their 1-replica twin served. */
const REPLICAS_SERVE_SHARE = 0.99;

const PLANS = {
  full: { requests: 10_000, concurrency: 2_000, streams: 8_000, rampS: 3, streamTokens: 20 },
  quick: { requests: 3_000, concurrency: 2_000, streams: 8_000, rampS: 3, streamTokens: 10 },
  smoke: { requests: 300, concurrency: 100, streams: 500, rampS: 1, streamTokens: 3 },
} as const;
type Plan = (typeof PLANS)[keyof typeof PLANS];

interface Variant {
  readonly capacity: 'unknown' | 'configured';
  readonly replicas: 1 | 3;
  readonly queue: boolean;
  /** The replicas share one Redis (`--redis-url`), emptied before the run. */
  readonly redis: boolean;
  /** Every client sends its own `x-session-id` on all its requests. */
  readonly sessions: boolean;
}

/**
 * A smoke run's variants: one per code path (the safe start without and with the router queue,
 * 1 and 3 replicas, configured capacity's mirrored sends, Redis, session keys), not the whole
 * matrix: CI time, where speed proves nothing.
 */
const SMOKE_VARIANTS: Variant[] = [
  { capacity: 'unknown', replicas: 3, queue: false, redis: false, sessions: false },
  { capacity: 'unknown', replicas: 1, queue: true, redis: false, sessions: false },
  { capacity: 'unknown', replicas: 3, queue: true, redis: false, sessions: false },
  { capacity: 'configured', replicas: 3, queue: true, redis: false, sessions: false },
  { capacity: 'unknown', replicas: 3, queue: true, redis: true, sessions: false },
  { capacity: 'unknown', replicas: 3, queue: true, redis: false, sessions: true },
];

/**
 * The runs: capacity unknown and configured × 1 and 3 replicas × without and with the router
 * queue; then, queued, the same with Redis, and capacity unknown with a session key per client
 * without and with Redis. A smoke run takes one of each code path instead ({@link SMOKE_VARIANTS}).
 */
function variants(smoke: boolean): Variant[] {
  if (smoke) return SMOKE_VARIANTS;
  const runs: Variant[] = [];
  const replicas = [1, 3] as const;
  for (const queue of [false, true]) {
    for (const capacity of ['unknown', 'configured'] as const) for (const n of replicas) runs.push({ capacity, replicas: n, queue, redis: false, sessions: false });
  }
  for (const capacity of ['unknown', 'configured'] as const) for (const n of replicas) runs.push({ capacity, replicas: n, queue: true, redis: true, sessions: false });
  for (const redis of [false, true]) for (const n of replicas) runs.push({ capacity: 'unknown', replicas: n, queue: true, redis, sessions: true });
  return runs;
}

/** One burst run. Times in ms from the first request an engine received. */
interface BurstRun extends Variant {
  readonly run: GeneratorRun;
  /** Largest `num_requests_waiting` per engine over every 100 ms sample. */
  readonly maxWaiting: number[];
  /** When every engine first had all its slots busy; undefined: never during the burst. */
  readonly allBusyAtMs: number | undefined;
  readonly seconds: number;
  readonly errors5xx: number;
  readonly resets: number;
  readonly livez: { readonly probes: number; readonly failures: number; readonly maxMs: number };
  /** 429s by router reason, summed over replicas. */
  readonly shedReasons: Record<string, number>;
  /** Session moves by reason and decisions by outcome, summed over replicas. */
  readonly counts: RouterCounts;
  /** With Redis: how long after the last replica started every replica reported it up and the whole fleet (undefined: not within 5 s), and whether all still did after the burst. */
  readonly sharedState: { readonly upInMs: number | undefined; readonly upAfter: boolean } | undefined;
  /** With session keys: where the engines saw each key's requests. */
  readonly trail: EngineTrail | undefined;
  /** Max engine waiting per sample, for the chart: [seconds, requests]. */
  readonly waitingSeries: [number, number][];
}

/** The label of a variant in tables. */
const label = (v: Variant) =>
  `${v.capacity === 'unknown' ? 'cold, capacity unknown' : 'capacity configured'}, ${v.replicas} replica${v.replicas === 1 ? '' : 's (told their count)'}${v.queue ? ', router queue' : ''}${v.redis ? ', Redis' : ''}${v.sessions ? ', a session key per client' : ''}`;

/** A config file telling the router each engine's capacity (`load.capacity` is file-only). */
function capacityFile(dir: string, urls: readonly string[], capacity: number): string {
  const file = join(dir, `capacity-${capacity}.json`);
  writeFileSync(file, JSON.stringify({ load: { capacity: Object.fromEntries(urls.map((url) => [url, capacity])) } }));
  return file;
}

/** The routers' counters, summed over replicas. */
async function countsOf(routers: readonly System[]): Promise<RouterCounts> {
  return routerCounts(await Promise.all(routers.map((router) => scrapeMetrics(router.adminUrl as string))));
}

/** Polls the replicas until each reports Redis up and sees the whole fleet; the ms that took, or undefined after 5 s. */
async function sharedStateUp(routers: readonly System[]): Promise<number | undefined> {
  const started = performance.now();
  while (performance.now() - started < SHARED_STATE_UP_MS) {
    if (fleetAgrees(await readViews(routers), routers.length)) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

/**
 * Which engine served each request of `spec` that carried a session key, in each key's send order:
 * a generator process numbers its requests as it sends them, and a key belongs to one client.
 */
function servedRequests(engines: readonly EngineSimulator[], spec: LoadSpec): ServedRequest[] {
  const out: ServedRequest[] = [];
  for (let g = 0; g < GENERATORS; g++) {
    const part = splitSpec(spec, GENERATORS, g);
    for (let n = 0; n < (part.requests ?? 0); n++) {
      const id = `${part.idPrefix}-${n}`;
      const engine = engines.findIndex((e) => e.received(id) !== undefined);
      const key = engine < 0 ? undefined : (engines[engine] as EngineSimulator).received(id)?.headers['x-session-id'];
      if (typeof key === 'string') out.push({ key, engine });
    }
  }
  return out;
}

async function stopProbes(probes: readonly ProbeSampler[]): Promise<BurstRun['livez']> {
  const latencies = (await Promise.all(probes.map((p) => p.stop()))).flat();
  const ok = latencies.filter((l) => l >= 0);
  return { probes: latencies.length, failures: latencies.length - ok.length, maxMs: ok.length === 0 ? Number.NaN : Math.max(...ok) };
}

/** What a burst needs besides its variant. */
interface BurstRig {
  readonly plan: Plan;
  readonly engines: readonly EngineSimulator[];
  /** The capacity file of the configured runs. */
  readonly configFile: string;
  /** Started when some variant uses it. */
  readonly redis: RedisServer | undefined;
  readonly quiet: boolean;
}

/** Starts the routers of `variant` cold, fires the burst, samples the engines, stops the routers. `index` makes the run's request ids and session keys its own. */
async function burst(rig: BurstRig, variant: Variant, index: number): Promise<BurstRun> {
  const { plan, engines } = rig;
  const urls = engines.map((e) => e.url);
  const redis = variant.redis ? rig.redis : undefined;
  if (variant.redis && redis === undefined) throw new Error('a Redis run without a Redis server');
  // No run inherits another's session assignments or fleet records.
  if (redis !== undefined) await flushRedis(redis.url);
  const args = [
    '--scrape-interval-ms', String(SCRAPE_MS), '--admission-max-waiting', String(MAX_WAITING),
    ...(variant.queue ? QUEUE : ['--admission-queue-length', '0']),
    ...(variant.capacity === 'configured' ? ['--config', rig.configFile] : []),
    // Replicas are told their count, as the chart does under an HPA (with Redis too): without shared
    // state each then takes its share of an engine's room instead of all of it.
    ...(variant.replicas > 1 ? ['--load-replicas', String(variant.replicas)] : []),
    ...(redis === undefined ? [] : ['--redis-url', redis.url]),
  ];
  const routers: System[] = [];
  let spreader: Awaited<ReturnType<typeof startNginx>> | undefined;
  try {
    for (let i = 0; i < variant.replicas; i++) routers.push(await startRouterSystem(urls, { name: `switchyard-${i + 1}`, args }));
    const upInMs = redis === undefined ? undefined : await sharedStateUp(routers);
    // Replicas behind one spreader, so the burst reaches them all at once as through a Service.
    if (routers.length > 1) spreader = await startNginx({ upstreams: routers.map((r) => r.url) });
    const target = spreader?.url ?? (routers[0] as System).url;
    const probes = routers.map((r) => startProbe(`${r.adminUrl as string}/livez`));
    const received = () => engines.reduce((sum, e) => sum + e.requests, 0);
    const before = received();
    const samples: { at: number; waiting: number[]; running: number[]; started: boolean }[] = [];
    const sampler = setInterval(() => samples.push({ at: performance.now(), waiting: engines.map((e) => e.scheduler.waiting), running: engines.map((e) => e.scheduler.running), started: received() > before }), 100);
    const started = performance.now();
    const spec: LoadSpec = { target, request: REQUEST, mode: { kind: 'closed', concurrency: plan.concurrency, sessionPerClient: variant.sessions }, warmupMs: 0, requests: plan.requests, idPrefix: `cold${index}`, seed: 11 };
    let run: GeneratorRun;
    try {
      run = await runGenerators(spec, { processes: GENERATORS, label: label(variant), quiet: rig.quiet });
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    const livez = await stopProbes(probes);
    const counts = await countsOf(routers);
    const sharedState = redis === undefined ? undefined : { upInMs, upAfter: (await readViews(routers)).every((v) => v.up === 1) };
    // From the first request an engine received on: the first sample that saw it, and every one after.
    const from = samples.findIndex((s) => s.started);
    const window = from < 0 ? [] : samples.slice(Math.max(0, from - 1));
    const t0 = window[0]?.at ?? started;
    const busy = window.find((s) => s.running.every((running, i) => running >= (ENGINES[i] as EngineSpec).maxSeqs));
    const kinds = Object.entries(run.failureKinds);
    return {
      ...variant,
      run,
      maxWaiting: engines.map((_, i) => Math.max(0, ...window.map((s) => s.waiting[i] as number))),
      allBusyAtMs: busy === undefined ? undefined : busy.at - t0,
      seconds,
      errors5xx: kinds.filter(([k]) => /^status 5/.test(k)).reduce((n, [, c]) => n + c, 0),
      resets: kinds.filter(([k]) => k === 'reset' || k === 'refused').reduce((n, [, c]) => n + c, 0),
      livez,
      shedReasons: counts.shed,
      counts,
      sharedState,
      trail: variant.sessions ? engineTrail(servedRequests(engines, spec)) : undefined,
      waitingSeries: window.map((s) => [(s.at - t0) / 1000, Math.max(...s.waiting)]),
    };
  } finally {
    await spreader?.stop();
    await stopAll(routers);
  }
}

/** One ramp of long streams through one router. */
async function ramp(plan: Plan, capacity: 'unknown' | 'configured', dir: string, quiet: boolean) {
  const engines = await startEngineProcesses(2, RAMP_MODEL, ['--max-seqs', '20000']);
  let router: System | undefined;
  try {
    const args = capacity === 'configured' ? ['--config', capacityFile(dir, engines.urls, 20_000)] : [];
    router = await startRouterSystem(engines.urls, { args });
    const probe = startProbe(`${router.adminUrl as string}/livez`);
    const request: RequestTemplate = { ...REQUEST, model: RAMP_MODEL, stream: true, headers: { 'x-sim-ttft-ms': '50', 'x-sim-itl-ms': '1000', 'x-sim-output-tokens': String(plan.streamTokens) } };
    const spec = { request, mode: { kind: 'open' as const, ratePerS: plan.streams / plan.rampS, maxConnections: plan.streams }, warmupMs: 0, requests: plan.streams, idPrefix: `ramp-${capacity}`, seed: 5 };
    const measurement = await measure(router, spec, { processes: 2, quiet }, `${plan.streams} streams over ${plan.rampS} s, capacity ${capacity}`);
    const livez = await stopProbes([probe]);
    return { capacity, measurement, livez, shedReasons: (await countsOf([router])).shed };
  } finally {
    await router?.stop();
    await engines.stop();
  }
}

/** Entry point; returns the exit code. */
export async function coldStart(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'cold-start');
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const planned = variants(options.smoke);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-cold-'));
  const engines = await startSimulatedFleet(MODEL, ENGINES);
  const runs: BurstRun[] = [];
  const ramps: Awaited<ReturnType<typeof ramp>>[] = [];
  let redis: RedisServer | undefined;
  try {
    if (planned.some((v) => v.redis)) redis = await startRedisServer();
    const rig: BurstRig = { plan, engines, configFile: capacityFile(dir, engines.map((e) => e.url), 8), redis, quiet: options.quiet };
    for (const [index, variant] of planned.entries()) {
      const run = await burst(rig, variant, index);
      const moves = run.trail === undefined ? '' : `, session moves counted ${countsCell(run.counts.moves)}, spills ${run.counts.decisions['affinity_spill'] ?? 0}, engine changes ${run.trail.engineChanges}`;
      console.error(`${label(run)}: engines waiting max ${run.maxWaiting.join('/')}, all busy at ${run.allBusyAtMs === undefined ? 'never' : `${run.allBusyAtMs.toFixed(0)} ms`}, ${run.run.ok} × 200, ${run.run.shed} × 429, ${run.run.failed} failed${moves}, ${run.seconds.toFixed(1)} s`);
      runs.push(run);
    }
    ramps.push(await ramp(plan, 'configured', dir, options.quiet), await ramp(plan, 'unknown', dir, options.quiet));
  } finally {
    await redis?.stop();
    await closeSimulatedFleet(engines);
    rmSync(dir, { recursive: true, force: true });
  }
  return report(argv, options, plan, runs, ramps);
}

function report(argv: readonly string[], options: ScenarioOptions<'cold-start'>, plan: Plan, runs: readonly BurstRun[], ramps: readonly Awaited<ReturnType<typeof ramp>>[]): number {
  const bars = new Bars();
  const cold = runs.filter((r) => r.capacity === 'unknown');
  // Configured runs with Redis are judged like cold ones: the replicas share one count of each engine's requests.
  const sharedConfigured = runs.filter((r) => r.capacity === 'configured' && r.redis);
  for (const r of [...cold, ...sharedConfigured]) {
    bars.check('correctness', `${label(r)}: every engine's num_requests_waiting ≤ maxWaiting (${MAX_WAITING}) in every 100 ms sample from the first request on`, r.maxWaiting.every((w) => w <= MAX_WAITING), `max ${r.maxWaiting.join('/')}`);
  }
  for (const r of cold.filter((r) => r.queue)) {
    bars.check('correctness', `${label(r)}: the backlog waits in the router queue and is served`, r.run.ok === r.run.measured, `${r.run.ok} of ${r.run.measured} served`);
  }
  const clean = (list: readonly BurstRun[], name: string) => {
    if (list.length === 0) return;
    const failures = list.reduce((n, r) => n + r.errors5xx + r.resets, 0);
    bars.check('correctness', `${name}: zero 5xx, zero resets, no other failure`, failures === 0 && list.every((r) => r.run.failed === 0), list.map((r) => `${r.errors5xx}/${r.resets}/${r.run.failed}`).join(', ') + ' (5xx/resets/failed per run)');
    bars.check('correctness', `${name}: no 429 for event-loop lag (start-up work is not overload)`, list.every((r) => (r.shedReasons['event_loop_lag'] ?? 0) === 0), list.map((r) => r.shedReasons['event_loop_lag'] ?? 0).join(', '));
  };
  clean(cold, 'cold runs');
  clean(sharedConfigured, 'capacity configured, Redis runs');
  bars.check('correctness', '/livez answered throughout every run', runs.every((r) => r.livez.failures === 0 && r.livez.probes > 0), `max ${ms(Math.max(...runs.map((r) => r.livez.maxMs)))} ms, ${runs.reduce((n, r) => n + r.livez.failures, 0)} failed`);
  const redisRuns = runs.filter((r) => r.redis);
  if (redisRuns.length > 0) {
    const up = (r: BurstRun) => r.sharedState?.upInMs !== undefined && r.sharedState.upAfter;
    const measured = redisRuns.map((r) => (r.sharedState?.upInMs === undefined ? 'never up' : `${r.sharedState.upInMs.toFixed(0)} ms${r.sharedState.upAfter ? '' : ', down after'}`)).join(', ');
    bars.check('correctness', `Redis runs: every replica reported Redis up and the whole fleet before the burst (within ${SHARED_STATE_UP_MS / 1000} s of starting), and Redis still up after it`, redisRuns.every(up), measured);
  }
  const window = 3 * SCRAPE_MS;
  for (const r of [...cold, ...sharedConfigured].filter((r) => r.queue)) {
    bars.check('performance', `${label(r)}: every engine fully busy within 3 scrape intervals (${window} ms) of the first request`, r.allBusyAtMs !== undefined && r.allBusyAtMs <= window, r.allBusyAtMs === undefined ? 'never' : `${r.allBusyAtMs.toFixed(0)} ms`);
  }
  for (const r of redisRuns.filter((r) => r.queue && r.replicas === 3)) {
    const one = redisRuns.find((o) => o.queue && o.replicas === 1 && o.capacity === r.capacity && o.sessions === r.sessions);
    if (one === undefined) continue;
    const share = r.run.ok / one.run.ok;
    bars.check('performance', `${label(r)}: serves ≥ ${pct(REPLICAS_SERVE_SHARE)} of what 1 replica served`, share >= REPLICAS_SERVE_SHARE, `${r.run.ok} vs ${one.run.ok} served (${(share * 100).toFixed(1)}%)`);
  }
  const sessionRuns: SessionRun[] = runs.flatMap((r) => (r.trail === undefined ? [] : [{ label: label(r), redis: r.redis, trail: r.trail, counts: r.counts }]));
  sessionBars(bars, sessionRuns);
  for (const r of ramps) {
    const m = r.measurement;
    // Capacity unknown: what the safe start cannot send yet waits in the router queue (on by default).
    bars.check('correctness', `ramp, capacity ${r.capacity}: ${plan.streams} long streams over ${plan.rampS} s all served, none shed for event-loop lag`, m.run.ok === plan.streams && (r.shedReasons['event_loop_lag'] ?? 0) === 0, `${m.run.ok} served, ${m.run.shed} shed (${JSON.stringify(r.shedReasons)}), ${m.run.failed} failed`);
  }
  for (const r of ramps.filter((r) => r.capacity === 'configured')) {
    const m = r.measurement;
    bars.check('performance', 'ramp: router RSS < 1 GiB', m.peakRss < 2 ** 30, `${(m.peakRss / 2 ** 20).toFixed(0)} MiB`);
  }

  const facts = runFacts(`npm run bench -- cold-start ${argv.join(' ')}`.trim());
  const row = (r: BurstRun) =>
    `| ${label(r)} | ${r.maxWaiting.join('/')} | ${r.allBusyAtMs === undefined ? 'never' : ms(r.allBusyAtMs)} | ${r.run.ok} | ${r.run.shed} | ${countsCell(r.shedReasons)} | ${r.errors5xx} | ${r.resets} | ${r.run.failed} | ${ms(r.livez.maxMs)} | ${r.seconds.toFixed(1)} |`;
  const rampRow = (r: (typeof ramps)[number]) => {
    const m = r.measurement;
    return `| ${r.capacity} | ${m.run.ok} | ${m.run.shed} | ${countsCell(r.shedReasons)} | ${m.run.failed} | ${ms(m.ttft.p50)} | ${ms(m.ttft.p99)} | ${ms(r.livez.maxMs)} | ${(m.peakRss / 2 ** 20).toFixed(0)} | ${m.run.generatorBottleneck ?? 'kept up'} |`;
  };
  const shared =
    redisRuns.length === 0
      ? []
      : [
          '',
          `Redis runs: Redis answers each command within \`redis.commandTimeoutMs\` (default 50 ms) or the request goes on with local state (a session lookup then by rendezvous hashing); three failures in a row open the breaker for a second.`,
          '',
          ...redisTable(redisRuns.map((r) => ({ label: label(r), upInMs: r.sharedState?.upInMs, counts: r.counts }))),
        ];
  const sessions =
    sessionRuns.length === 0
      ? []
      : [
          '',
          `Session runs: each of the ${plan.concurrency} clients sends its own \`x-session-id\` on all its requests. The engines record which requests they received, so a key's engine changes are counted from their side. With Redis a key keeps its stored engine until a replica moves it (counted by reason); without Redis its engine is the rendezvous-hash first choice, and a request sent elsewhere is an \`affinity_spill\` decision (no reason recorded), after which the next goes home again.`,
          '',
          ...sessionTable(sessionRuns),
        ];
  const markdown = [
    factsLine(facts),
    '',
    `3 engine simulators in the harness process (8 slots each, ~0.3 s per answer); router processes started cold for every run (scrape every ${SCRAPE_MS} ms, \`admission.maxWaiting\` ${MAX_WAITING}, defaults otherwise), load from ${plan.concurrency} closed-loop clients sending ${plan.requests} small non-streamed chat requests, split evenly over the replicas. "Capacity configured" tells the routers the engines' 8 slots (\`load.capacity\`). "Redis": the replicas share one local redis-server (valkey), emptied before each run, and the burst starts once every replica reports it up and sees the whole fleet. Engine queues sampled every 100 ms from the first request an engine received; "all busy" is the first sample with every slot of every engine running.`,
    '',
    bars.markdown(options),
    '',
    '| run | max engine waiting | all busy at ms | 200 | 429 | 429 reasons | 5xx | resets | failed | /livez max ms | s |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...runs.map(row),
    ...shared,
    ...sessions,
    '',
    `Ramp: ${plan.streams} streams (${plan.streamTokens} tokens 1 s apart) arriving over ${plan.rampS} s through one router to 2 engine processes with 20,000 slots each; "configured" tells the router so, "unknown" leaves it to the safe start.`,
    '',
    '| capacity | served | 429 | 429 reasons | failed | TTFT p50 ms | TTFT p99 ms | /livez max ms | router peak RSS MiB | load generator |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...ramps.map(rampRow),
    '',
    'Chart: `cold-start-queues.svg` (the longest engine queue over the burst, per run without Redis or session keys).',
  ].join('\n');
  const chart = lineChart({
    title: 'Cold start: longest engine queue during the burst',
    xLabel: 'seconds from the first request',
    yLabel: 'requests waiting in the engine (max over engines)',
    series: runs.filter((r) => !r.redis && !r.sessions && (!r.queue || r.capacity === 'unknown')).map((r) => ({ name: label(r), dashed: r.capacity === 'configured', points: r.waitingSeries })),
    thresholds: [{ label: `maxWaiting ${MAX_WAITING}`, y: MAX_WAITING }],
  });
  const data = {
    plan,
    engines: ENGINES,
    bars: bars.list,
    runs: runs.map(({ run, ...rest }) => ({ ...rest, run: { ok: run.ok, shed: run.shed, failed: run.failed, failureKinds: run.failureKinds } })),
    ramps: ramps.map((r) => ({ ...r, measurement: withoutHistograms(r.measurement) })),
  };
  writeResults(options, 'cold-start', facts, data, markdown, [{ name: 'queues', svg: chart }]);
  return bars.pass(options) ? 0 : 1;
}

runIfMain(import.meta.url, coldStart);

/**
 * The live scenario the dashboards are checked against: two router replicas
 * (separate processes, so Prometheus scrapes them as separate targets) over
 * six simulated engines serving three models, one Prometheus scraping every
 * router's admin /metrics and every engine's own /metrics each second, and a
 * load that lights every panel:
 *
 * - warm-up (6 s): another regime (m-alpha and m-beta at under a seventh
 *   of their rate, answers several times slower, m-gamma shedding most of
 *   its requests), so a panel reading lifetime sums instead of rates
 *   reads visibly wrong in the main phase;
 * - main (25 s, 70 requests/s): m-alpha and m-beta with conversations,
 *   m-gamma on one engine with one batch slot, over its capacity
 *   (saturation, the router queue, shedding); from 2 s on, engine a3 resets
 *   every connection (retries, upstream errors, ejection, sessions moved off
 *   it) and engine b1's /metrics hangs (stale scrapes, scrape age, failed
 *   scrapes); at 10-13 s half of m-alpha's requests get an engine 500 (a
 *   5xx burst); at 16-17.5 s Redis is paused (SIGSTOP: command timeouts,
 *   the breaker opening and closing again, degraded session lookups).
 *
 * m-beta's two engines also serve two LoRA adapters with one adapter slot
 * each, asked for at 2 and 1 requests a second: they swap, and the LoRA row
 * has requests, starts and adapters to show.
 *
 * The routers share state through a real redis-server and require API
 * keys: the main tenant has no limits; a small stream of a tenant capped at
 * one request every two seconds draws quota rejections, and one with an
 * unknown key draws 401s.
 *
 * Faults are the simulator's own knobs and signals to Redis, switched
 * between phases.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import type { Rng } from '../../loadtest/sim/random.ts';
import { startRouterProcess, type RouterProcess } from '../kit/harness.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { LoadGenerator, type LoadStream } from './load.ts';
import { startPrometheus, type PrometheusServer } from './prometheus.ts';

/** Target labels, as a Kubernetes ServiceMonitor/PodMonitor would attach them. */
export const ROUTER_NAMESPACE = 'switchyard-live';
export const ROUTER_JOB = 'switchyard';
export const ENGINE_NAMESPACE = 'inference';
export const MODELS = ['m-alpha', 'm-beta', 'm-gamma'] as const;

/** Phase lengths, when the faults start, and where in the main phase the panels are evaluated (over its last 20 s, faults all on). */
const WARMUP_MS = 6_000;
const MAIN_MS = 25_000;
const FAULTS_AT_MS = 2_000;
const BURST_AT_MS = 10_000;
const BURST_MS = 3_000;
const REDIS_PAUSE_AT_MS = 16_000;
const REDIS_PAUSE_MS = 1_500;
const EVALUATE_AT_MS = 24_000;
const WINDOW_S = 20;

/** API keys of the scenario's tenants; `unknown` is in no file. */
const KEYS = { main: 'sk-dashboards-main', capped: 'sk-dashboards-capped', unknown: 'sk-dashboards-unknown' } as const;
/** Label of the capped tenant's outcomes: its 429s are quota rejections, not shedding. */
export const QUOTA_LABEL = 'quota-capped';
/** Label of the unknown key's outcomes (401s, never forwarded). */
const UNAUTHORIZED_LABEL = 'unauthorized';
const API_KEYS_FILE = [
  'tenants:',
  '  main: {}',
  '  capped: { requestsPerSecond: 0.5, burst: 1 }',
  'keys:',
  `  - key: ${KEYS.main}`,
  '    tenant: main',
  `  - key: ${KEYS.capped}`,
  '    tenant: capped',
  '',
].join('\n');

/** m-beta's LoRA adapters, one slot per engine: the two swap, so the LoRA row has starts to show. */
const BETA_ADAPTERS = ['beta-sql', 'beta-chat'] as const;
const LORA_KNOBS = { loraSlots: 1, loraLoadMs: 50, loraAdapters: BETA_ADAPTERS.join(',') };

const ENGINES: readonly { readonly name: string; readonly model: string; readonly maxSeqs: number; readonly capacityUnknown?: true; readonly lora?: true }[] = [
  { name: 'a1', model: 'm-alpha', maxSeqs: 32 },
  { name: 'a2', model: 'm-alpha', maxSeqs: 32 },
  { name: 'a3', model: 'm-alpha', maxSeqs: 32 },
  { name: 'b1', model: 'm-beta', maxSeqs: 32, lora: true },
  // Left out of the configured capacities: the safe-start panel needs an engine the router must learn.
  { name: 'b2', model: 'm-beta', maxSeqs: 32, capacityUnknown: true, lora: true },
  { name: 'g1', model: 'm-gamma', maxSeqs: 1 },
];

const ROUTER_FLAGS = [
  '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0',
  // Fast scrapes, so a hung /metrics turns stale within a second.
  '--scrape-interval-ms', '250', '--scrape-timeout-ms', '200',
  // m-gamma's one small engine saturates: a short router queue, then 429s.
  '--admission-max-waiting', '1', '--admission-queue-length', '4', '--admission-queue-max-wait-ms', '150',
];

/** A finished scenario: the Prometheus that watched it and what the load generator saw. */
export interface ScenarioRun {
  readonly prometheus: PrometheusServer;
  readonly load: LoadGenerator;
  /** Unix seconds at which the panels are to be evaluated (inside the main phase, after every fault started). */
  readonly evaluateAtS: number;
  /** Seconds of main-phase history before `evaluateAtS` that every fault covers. */
  readonly windowS: number;
  /** Stops everything. */
  close(): Promise<void>;
}

function knobs(ttftMinMs: number, ttftMaxMs: number, extra: Record<string, string> = {}): (random: Rng) => Record<string, string> {
  return (random) => ({
    'x-sim-ttft-ms': String(Math.round(ttftMinMs + random() * (ttftMaxMs - ttftMinMs))),
    'x-sim-itl-ms': '2',
    'x-sim-output-tokens': '4',
    authorization: `Bearer ${KEYS.main}`,
    ...extra,
  });
}

/** Requests per second of m-alpha, m-beta and m-gamma in the main phase. */
const MAIN_RATES = [30, 15, 25] as const;
/**
 * Time to first token the engines are told to take (ms, uniform), per model
 * family. m-alpha and m-beta spread widely, so the p99 the checks compare
 * falls where samples are dense (a quantile interpolated in a sparse bucket
 * swings with a few milliseconds of client-side delay); m-gamma is quick but
 * has one batch slot, so its queueing adds no tail beyond theirs.
 */
const MAIN_TTFT_MS: [number, number] = [100, 700];
const GAMMA_TTFT_MS: [number, number] = [20, 100];
const WARMUP_TTFT_MS: [number, number] = [1_000, 1_500];

function streams(rates: readonly number[], ttft: [number, number], gammaTtft: [number, number], alphaExtra: Record<string, string> = {}): LoadStream[] {
  const [alpha = 0, beta = 0, gamma = 0] = rates;
  return [
    { model: 'm-alpha', ratePerS: alpha, streamShare: 0.5, sessions: 40, headers: knobs(ttft[0], ttft[1], alphaExtra) },
    { model: 'm-beta', ratePerS: beta, streamShare: 0.5, sessions: 20, headers: knobs(ttft[0], ttft[1]) },
    { model: 'm-gamma', ratePerS: gamma, streamShare: 0.5, sessions: 0, headers: knobs(gammaTtft[0], gammaTtft[1]) },
  ];
}

/** The main phase's small tenant streams: one over its quota, one with a key nobody issued. */
function tenantStreams(): LoadStream[] {
  const quick = knobs(20, 100);
  return [
    { model: 'm-beta', ratePerS: 1, streamShare: 0.5, sessions: 0, label: QUOTA_LABEL, headers: (random) => ({ ...quick(random), authorization: `Bearer ${KEYS.capped}` }) },
    { model: 'm-beta', ratePerS: 0.5, streamShare: 0, sessions: 0, label: UNAUTHORIZED_LABEL, headers: (random) => ({ ...quick(random), authorization: `Bearer ${KEYS.unknown}` }) },
  ];
}

/** The main phase's requests for m-beta's LoRA adapters. */
function loraStreams(): LoadStream[] {
  const quick = knobs(20, 100);
  return BETA_ADAPTERS.map((model, i) => ({ model, ratePerS: 2 - i, streamShare: 0.5, sessions: 0, headers: quick }));
}

/** The processes of the scenario. */
interface Fleet {
  /** Engine name → simulator (a3 is replaced when its fault starts). */
  readonly engines: Map<string, EngineSimulator>;
  readonly routers: RouterProcess[];
  readonly prometheus: PrometheusServer;
  /** The Redis the routers share state through (paused mid-run). */
  readonly redis: RedisServer;
  close(): Promise<void>;
}

/** Runs the whole scenario; `binary` is the Prometheus executable. */
export async function runScenario(binary: string): Promise<ScenarioRun> {
  const fleet = await startFleet(binary);
  try {
    const { load, evaluateAtS } = await drive(fleet);
    // The answers are in; wait for a scrape of every router after the evaluation time.
    await until(
      async () => [...(await fleet.prometheus.lastScrapes())].filter(([key]) => key.startsWith(`${ROUTER_JOB}/`)).every(([, t]) => t.at > evaluateAtS + 0.5),
      10_000,
      'prometheus stopped scraping the routers',
    );
    return { prometheus: fleet.prometheus, load, evaluateAtS, windowS: WINDOW_S, close: () => fleet.close() };
  } catch (err) {
    await fleet.close();
    throw err;
  }
}

/** Starts the engines, the two router processes and Prometheus, and waits until every target is up. */
async function startFleet(binary: string): Promise<Fleet> {
  const engines = new Map(ENGINES.map((e, i) => [e.name, new EngineSimulator({ model: e.model, seed: i + 1, knobs: { maxSeqs: e.maxSeqs, ...(e.lora ? LORA_KNOBS : {}) } })]));
  const routers: RouterProcess[] = [];
  let prometheus: PrometheusServer | undefined;
  let redis: RedisServer | undefined;
  const configDir = mkdtempSync(join(tmpdir(), 'switchyard-dashboards-'));
  const close = async () => {
    redis?.resume();
    for (const r of routers) r.child.kill('SIGTERM');
    await Promise.all(routers.map((r) => r.exit));
    await prometheus?.close();
    await Promise.all([...engines.values()].map((e) => e.close()));
    await redis?.stop();
    rmSync(configDir, { recursive: true, force: true });
  };
  try {
    for (const engine of engines.values()) await engine.listen();
    redis = await startRedisServer();
    const apiKeysFile = join(configDir, 'api-keys.yaml');
    writeFileSync(apiKeysFile, API_KEYS_FILE);
    const backends = [...engines.values()].flatMap((e) => ['--backend', e.url]);
    // Capacities as an operator who knows the engines' max-num-seqs configures them (file only):
    // the saturation under test is m-gamma's, not the safe start's for engines of unknown size;
    // one m-beta engine is left for the router to learn, so the safe-start panel has series.
    const configFile = join(configDir, 'router.yaml');
    writeFileSync(
      configFile,
      JSON.stringify({
        load: { capacity: Object.fromEntries(ENGINES.filter((e) => e.capacityUnknown !== true).map((e) => [(engines.get(e.name) as EngineSimulator).url, e.maxSeqs])) },
        redis: { url: redis.url },
        auth: { apiKeysFile },
        // m-gamma's keyless one-shot prompts go through prefix affinity, so the shared prefix
        // placement lookups have series (one engine: where they go does not change).
        routing: { modelPolicies: { 'm-gamma': 'prefix-affinity' } },
      }),
    );
    for (let i = 0; i < 2; i++) routers.push(await startRouterProcess(['--config', configFile, ...ROUTER_FLAGS, ...backends]));
    const started = await startPrometheus(binary, [
      {
        job: ROUTER_JOB,
        targets: routers.map((r, i) => ({ address: `127.0.0.1:${r.admin}`, labels: { namespace: ROUTER_NAMESPACE, pod: `switchyard-${i}` } })),
      },
      {
        job: 'vllm',
        targets: [...engines].map(([name, e]) => ({ address: e.url.replace('http://', ''), labels: { namespace: ENGINE_NAMESPACE, pod: `engine-${name}` } })),
      },
    ]);
    prometheus = started;
    await until(async () => (await Promise.all(routers.map((r) => knowsAllModels(r.traffic)))).every(Boolean), 20_000, 'routers never learned every model');
    await until(async () => [...(await started.lastScrapes()).values()].every((t) => t.health === 'up'), 20_000, 'prometheus never scraped every target');
    return { engines, routers, prometheus: started, redis, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Sends the warm-up and the main phase, switching the faults on between sub-phases. */
async function drive(fleet: Fleet): Promise<{ load: LoadGenerator; evaluateAtS: number }> {
  const load = new LoadGenerator(fleet.routers.map((r) => `http://127.0.0.1:${r.traffic}`));
  const main = (extra: Record<string, string> = {}) => [...streams(MAIN_RATES, MAIN_TTFT_MS, GAMMA_TTFT_MS, extra), ...tenantStreams(), ...loraStreams()];
  await load.phase(streams([4, 2, 20], WARMUP_TTFT_MS, WARMUP_TTFT_MS), WARMUP_MS);
  const mainStartS = Date.now() / 1000;
  await load.phase(main(), FAULTS_AT_MS);
  await startFaults(fleet.engines);
  await load.phase(main(), BURST_AT_MS - FAULTS_AT_MS);
  await load.phase(main({ 'x-sim-fail-rate': '0.5' }), BURST_MS);
  await load.phase(main(), REDIS_PAUSE_AT_MS - BURST_AT_MS - BURST_MS);
  fleet.redis.pause();
  try {
    await load.phase(main(), REDIS_PAUSE_MS);
  } finally {
    fleet.redis.resume();
  }
  await load.phase(main(), MAIN_MS - REDIS_PAUSE_AT_MS - REDIS_PAUSE_MS);
  await load.drain();
  return { load, evaluateAtS: Math.floor(mainStartS + EVALUATE_AT_MS / 1000) };
}

/** a3 starts resetting every connection; b1's /metrics starts hanging. */
async function startFaults(engines: Map<string, EngineSimulator>): Promise<void> {
  // a3 is replaced, on its port, by an engine that resets every connection: setting the knob
  // on the running one would spare the keep-alive connections the routers already hold.
  const a3 = engines.get('a3') as EngineSimulator;
  const port = Number(new URL(a3.url).port);
  await a3.close();
  const resetting = new EngineSimulator({ model: a3.model, knobs: { refuse: true } });
  engines.set('a3', resetting);
  await resetting.listen('127.0.0.1', port);
  (engines.get('b1') as EngineSimulator).knobs.metricsHang = true;
}

async function knowsAllModels(trafficPort: number): Promise<boolean> {
  try {
    const body = (await (await fetch(`http://127.0.0.1:${trafficPort}/v1/models`, { headers: { authorization: `Bearer ${KEYS.main}` } })).json()) as { data?: { id: string }[] };
    const ids = new Set((body.data ?? []).map((m) => m.id));
    return MODELS.every((m) => ids.has(m));
  } catch {
    return false;
  }
}

/** Polls `condition` every 100 ms until it holds; fails after `timeoutMs`. */
async function until(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(what);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

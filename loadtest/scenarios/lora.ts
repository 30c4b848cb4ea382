/**
 * `npm run bench -- lora`: LoRA-aware scheduling against least-load. Four
 * engine simulators with two adapter slots each serve eight adapters of
 * skewed popularity (Zipf: the first takes about a third of the requests,
 * more than one engine serves); a request for an adapter that is not active
 * on its engine waits for a slot and pays a swap-in delay (the simulator's
 * model of vLLM's adapter loading). The same Poisson arrivals are replayed
 * through a fresh router per policy, at 70% and 110% of what the engines
 * serve without swaps, in interleaved rounds. Reported per run: adapter swaps
 * per 1,000 requests (the engines' own count) and TTFT p99 from the
 * scheduled arrival. Bars (median of the rounds): swaps ≤ 0.3× and TTFT p99
 * ≤ 0.7× least-load's at each load, without shedding more.
 *
 *   npm run bench -- lora [--quick | --smoke] [--rounds N]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { quantile } from '../bench/stats.ts';
import type { EngineSimulator } from '../sim/server.ts';
import { spawnSwitchyard } from '../../tests/kit/router-process.ts';
import { closeSimulatedFleet, fleetCapacityPerS, measureServiceMs, startSimulatedFleet, type EngineSpec } from './fleet.ts';
import { poissonSchedule, seededRng, type Arrival } from './poisson.ts';
import { Bars, factsLine, medianOf, ms, ratio, runFacts, runIfMain, scenarioOptions, writeResults, type RunMode } from './results.ts';
import { debugEndpoints, decisionCounts, waitUntilRoutable } from './run-policy.ts';
import { streamChat } from './sse-client.ts';

const MODEL = 'lora-base';
const ADAPTERS = Array.from({ length: 8 }, (_, i) => `adapter-${i + 1}`);
/** Zipf popularity (s = 1): adapter-1 about 37% of requests, adapter-8 about 5%. */
const POPULARITY = ADAPTERS.map((_, i) => 1 / (i + 1));
const ENGINE: Omit<EngineSpec, 'name'> = { maxSeqs: 8, ttftMs: 30, itlMs: 5, outputTokens: 32, loraSlots: 2, loraLoadMs: 150, loraAdapters: ADAPTERS };
const FLEET: readonly EngineSpec[] = ['A', 'B', 'C', 'D'].map((name) => ({ name, ...ENGINE }));
const LOADS = [0.7, 1.1] as const;
const POLICIES = ['least-load', 'auto'] as const;
const SEED = 7;

const PLANS = {
  full: { rounds: 3, warmupMs: 3000, durationMs: 15_000, loads: LOADS },
  quick: { rounds: 1, warmupMs: 2000, durationMs: 8000, loads: LOADS },
  smoke: { rounds: 1, warmupMs: 500, durationMs: 2000, loads: [0.7] },
} as const;

/** One policy's run at one load. */
interface LoraRun {
  readonly policy: (typeof POLICIES)[number];
  readonly load: number;
  readonly round: number;
  readonly requests: number;
  readonly failed: number;
  readonly shed: number;
  readonly swaps: number;
  readonly swapsPer1000: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  /** Decisions by outcome, from the router's metrics. */
  readonly decisions: Record<string, number>;
  /** Capacity the router believed each engine had at the end (null: unknown), from /debug/endpoints. */
  readonly routerCapacity: (number | null)[];
}

/** Entry point; returns the exit code. */
export async function lora(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'lora');
  const base = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const plan = { ...base, rounds: options.extra['rounds'] !== undefined ? Math.max(1, Number(options.extra['rounds'])) : base.rounds };
  const capacityPerS = await measuredCapacity();
  console.error(`fleet capacity without swaps ${capacityPerS.toFixed(1)} req/s`);
  const runs: LoraRun[] = [];
  for (let round = 1; round <= plan.rounds; round++) {
    for (const load of plan.loads) {
      const schedule = poissonSchedule({ ratePerS: capacityPerS * load, lengthMs: plan.warmupMs + plan.durationMs, sessionShare: 0, sessions: 1, seed: SEED + round });
      const adapters = adapterOf(schedule, SEED + round);
      // Interleaved: each round alternates which policy goes first.
      const order = round % 2 === 1 ? POLICIES : [...POLICIES].reverse();
      for (const policy of order) {
        const run = await runOnce(policy, load, round, schedule, adapters, plan.warmupMs);
        runs.push(run);
        console.error(`round ${round} ${Math.round(load * 100)}% ${policy}: ${run.requests} requests, ${run.swapsPer1000.toFixed(0)} swaps/1000, TTFT p50 ${ms(run.ttftP50Ms)} p99 ${ms(run.ttftP99Ms)} ms, shed ${run.shed}, failed ${run.failed}`);
      }
    }
  }
  const facts = runFacts(`npm run bench -- lora${argv.length > 0 ? ` ${argv.join(' ')}` : ''}`);
  const bars = judge(runs, plan.loads);
  writeResults(options, 'lora', facts, { plan, capacityPerS, runs }, report(runs, plan, capacityPerS, bars, facts, options));
  return bars.pass(options) ? 0 : 1;
}

/** Requests per second the fleet serves with every slot busy and no swaps (the base model, measured). */
async function measuredCapacity(): Promise<number> {
  const engines = await startSimulatedFleet(MODEL, FLEET);
  try {
    return fleetCapacityPerS(FLEET, await measureServiceMs(engines, MODEL));
  } finally {
    await closeSimulatedFleet(engines);
  }
}

/** The adapter each arrival asks for, drawn by popularity from its own seeded stream. */
function adapterOf(schedule: readonly Arrival[], seed: number): string[] {
  const random = seededRng(seed * 31 + 1);
  const total = POPULARITY.reduce((a, b) => a + b, 0);
  return schedule.map(() => {
    let draw = random() * total;
    for (let i = 0; i < ADAPTERS.length; i++) {
      draw -= POPULARITY[i] as number;
      if (draw < 0) return ADAPTERS[i] as string;
    }
    return ADAPTERS[ADAPTERS.length - 1] as string;
  });
}

/** A fresh fleet and router with `policy`; the schedule played open-loop; swaps counted over the measured window. */
async function runOnce(policy: LoraRun['policy'], load: number, round: number, schedule: readonly Arrival[], adapters: readonly string[], warmupMs: number): Promise<LoraRun> {
  const engines = await startSimulatedFleet(MODEL, FLEET);
  const router = await spawnSwitchyard([
    'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0',
    ...engines.flatMap((engine) => ['--backend', engine.url]),
    '--routing-policy', policy,
    '--lifecycle-pre-stop-delay-ms', '0',
    '--log-level', 'info',
  ]).catch(async (err: unknown) => {
    await closeSimulatedFleet(engines);
    throw err;
  });
  const traffic = `http://127.0.0.1:${router.ports['traffic'] as number}`;
  const admin = `http://127.0.0.1:${router.ports['admin'] as number}`;
  const pool = new Pool(traffic, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  try {
    await waitUntilRoutable(admin, engines.map((engine) => engine.url));
    const start = performance.now();
    let swapsAtWarmup: Promise<number> | undefined;
    const pending: Promise<{ measured: boolean; ttftMs: number | undefined; error: string | undefined; shed: boolean }>[] = [];
    for (const arrival of schedule) {
      const due = start + arrival.atMs;
      const wait = due - performance.now();
      if (wait >= 1) await sleep(wait);
      if (swapsAtWarmup === undefined && arrival.atMs >= warmupMs) swapsAtWarmup = swapsOf(engines);
      const model = adapters[arrival.index] as string;
      pending.push(
        streamChat(pool, { model, requestId: `lora-${policy}-${arrival.index}`, sessionKey: undefined, turn: 1 }).then((outcome) => ({
          measured: arrival.atMs >= warmupMs,
          ttftMs: outcome.firstDataAt === undefined ? undefined : outcome.firstDataAt - due,
          error: outcome.error,
          shed: outcome.shed,
        })),
      );
    }
    const records = (await Promise.all(pending)).filter((r) => r.measured);
    const swaps = (await swapsOf(engines)) - (await (swapsAtWarmup ?? Promise.resolve(0)));
    const ttfts = records.flatMap((r) => (r.error === undefined && r.ttftMs !== undefined ? [r.ttftMs] : [])).sort((a, b) => a - b);
    return {
      policy,
      load,
      round,
      requests: records.length,
      failed: records.filter((r) => r.error !== undefined && !r.shed).length,
      shed: records.filter((r) => r.shed).length,
      swaps,
      swapsPer1000: records.length === 0 ? 0 : (swaps * 1000) / records.length,
      ttftP50Ms: quantile(ttfts, 0.5),
      ttftP99Ms: quantile(ttfts, 0.99),
      decisions: await decisionCounts(admin),
      routerCapacity: await capacities(admin, engines),
    };
  } finally {
    await pool.close();
    await router.stop();
    await closeSimulatedFleet(engines);
  }
}

/** Adapter swaps so far, summed over the engines (the simulator's `sim:lora_swaps_total`). */
async function swapsOf(engines: readonly EngineSimulator[]): Promise<number> {
  const bodies = await Promise.all(engines.map(async (engine) => (await fetch(`${engine.url}/metrics`)).text()));
  return bodies.reduce((sum, body) => sum + Number(/^sim:lora_swaps_total (\S+)$/m.exec(body)?.[1] ?? Number.NaN), 0);
}

async function capacities(admin: string, engines: readonly EngineSimulator[]): Promise<(number | null)[]> {
  const known = await debugEndpoints(admin);
  return engines.map((engine) => known.find((e) => e.url === engine.url)?.load.capacity ?? null);
}

/** The runs of `policy` at `load`, and the median of `pick` over them. */
function median(runs: readonly LoraRun[], policy: LoraRun['policy'], load: number, pick: (run: LoraRun) => number): number {
  const values = runs.filter((r) => r.policy === policy && r.load === load).map(pick);
  return values.length === 0 ? Number.NaN : medianOf(values).median;
}

function judge(runs: readonly LoraRun[], loads: readonly number[]): Bars {
  const bars = new Bars();
  const failed = runs.reduce((sum, r) => sum + r.failed, 0);
  bars.check('correctness', 'no failed requests', failed === 0, `${failed} failed`);
  for (const load of loads) {
    const at = `${Math.round(load * 100)}%`;
    const swaps = median(runs, 'auto', load, (r) => r.swapsPer1000) / median(runs, 'least-load', load, (r) => r.swapsPer1000);
    bars.check('performance', `adapter swaps per 1,000 requests at ${at}: LoRA-aware ≤ 0.3× least-load`, swaps <= 0.3, ratio(swaps));
    const p99 = median(runs, 'auto', load, (r) => r.ttftP99Ms) / median(runs, 'least-load', load, (r) => r.ttftP99Ms);
    bars.check('performance', `TTFT p99 at ${at}: LoRA-aware ≤ 0.7× least-load`, p99 <= 0.7, ratio(p99));
    const shedAware = median(runs, 'auto', load, (r) => r.shed);
    const shedLeast = median(runs, 'least-load', load, (r) => r.shed);
    bars.check('performance', `shed at ${at}: LoRA-aware no more than least-load`, shedAware <= shedLeast, `${shedAware} vs ${shedLeast}`);
  }
  return bars;
}

function report(runs: readonly LoraRun[], plan: { rounds: number; warmupMs: number; durationMs: number; loads: readonly number[] }, capacityPerS: number, bars: Bars, facts: ReturnType<typeof runFacts>, mode: RunMode): string {
  const rows = runs.map(
    (r) =>
      `| ${r.round} | ${Math.round(r.load * 100)}% | ${r.policy === 'auto' ? 'auto (LoRA-aware, default)' : r.policy} | ${r.requests} | ${r.shed} | ${r.failed} | ${r.swaps} | ${r.swapsPer1000.toFixed(0)} | ${ms(r.ttftP50Ms)} | ${ms(r.ttftP99Ms)} | ${r.decisions['lora_hit'] ?? 0} / ${r.decisions['lora_spill'] ?? 0} | ${r.routerCapacity.map((c) => c ?? '?').join('/')} |`,
  );
  return [
    factsLine(facts),
    '',
    `4 engine simulators (8 slots, 30 ms to first token, 32 tokens 5 ms apart, 2 adapter slots, 150 ms to swap an adapter in), 8 adapters of Zipf popularity (${POPULARITY.map((p) => `${Math.round((p / POPULARITY.reduce((a, b) => a + b, 0)) * 100)}%`).join('/')}); fleet capacity without swaps ${capacityPerS.toFixed(1)} req/s. Poisson arrivals at ${plan.loads.map((l) => `${Math.round(l * 100)}%`).join(' and ')} of it, ${plan.warmupMs / 1000} s warm-up + ${plan.durationMs / 1000} s measured, the same arrivals per policy in a round, ${plan.rounds} interleaved round(s); routers at default settings but the policy. Swaps: the engines' own count over the measured window (and its drain). TTFT from the scheduled arrival, over served requests.`,
    '',
    bars.markdown(mode),
    '',
    '| round | load | policy | requests | shed (429) | failed | swaps | swaps per 1,000 | TTFT p50 ms | TTFT p99 ms | lora_hit / lora_spill | router capacity at end |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

runIfMain(import.meta.url, lora);

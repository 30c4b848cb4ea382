/**
 * One row of the prefix-affinity benchmark: a fresh fleet of in-process
 * engine simulators (empty caches), one router setup in front of it (1 or 3
 * switchyard processes, the oracle, or a peer's `cache_aware`), a workload
 * played against it, and the figures the report needs: the engines' prefix
 * hit ratio from their own counters, TTFT, served/shed/failed, how evenly
 * the batches were filled, and how busy each core of the machine was.
 *
 * The engines run in this process (so their running counts are read exactly
 * and the oracle can read their caches); routers are child processes. One
 * row never fails the run: a router that cannot start is a row that says why.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { seededRng } from '../sim/random.ts';
import type { EngineSimulator } from '../sim/server.ts';
import { chatTurn } from './chat-turn.ts';
import { closePrefixEngines, FLEET, MODEL, startPrefixEngines } from './prefix-fleet.ts';
import { coreBusy, hitRatio, parseCacheCounters, runningBalance, summarizeWindow, type CacheCounters, type RunningBalance, type TurnRecord, type WindowSummary } from './prefix-metrics.ts';
import { startTarget, type RouterName, type Target, type TargetSpec } from './prefix-targets.ts';
import { standInReplies, turnBody, type Workload, type WorkloadName } from './prefix-workloads.ts';
import { coreTimes, cpuMs } from './systems.ts';

/** One row to run: a router setup (prefix-targets.ts), a workload and its timing. */
export interface RowSpec extends TargetSpec {
  readonly workload: Workload;
  /** Conversations arriving per second (Poisson); each plays its turns with think time. */
  readonly conversationsPerS: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** How long requests due in the window may take to finish after it before they are abandoned (failed). */
  readonly drainMs: number;
  /** Arrival schedule seed (the same for every router). */
  readonly seed: number;
  /** Distinguishes this row's request ids. */
  readonly id: string;
}

/** What one row measured. */
export interface RowResult {
  readonly workload: WorkloadName;
  readonly router: RouterName;
  readonly replicas: number;
  readonly shedding: boolean;
  /** Set when the router could not run here; nothing else is then meaningful. */
  readonly unavailable?: string;
  /** The router command line, for the report. */
  readonly description: string;
  readonly window: WindowSummary;
  /** Σ Δhits / Σ Δqueries over the measured window, from the engines' counters. */
  readonly hitRatio: number;
  readonly hitTokens: number;
  readonly queriedTokens: number;
  /** Inference requests the engines received in the window (the denominator for tokens per request). */
  readonly engineRequests: number;
  readonly running: RunningBalance;
  /** Busy share of each core over the measured window (0-1). */
  readonly coreBusy: number[];
  /** Router processes' CPU per request completed in the window (µs); undefined for the in-process oracle. */
  readonly routerCpuUsPerRequest: number | undefined;
}

/** A core busier than this makes the row's latency a measure of the machine, not the router. */
export const BUSY_CORE_LIMIT = 0.8;

/** Whether the machine had headroom through the row (no core above {@link BUSY_CORE_LIMIT}). */
export function rowValid(row: RowResult): boolean {
  return row.unavailable === undefined && row.coreBusy.every((busy) => !(busy > BUSY_CORE_LIMIT));
}

/** Longest ramp of a one-turn workload's arrivals at the start of the warm-up (ms). */
const RAMP_MS = 5_000;
/** Indices of the conversations under way when a row starts (far from those that arrive during it). */
const UNDER_WAY_INDEX = 1_000_000;
/** Size of a stand-in reply: the fleet's replies are 16 tokens of the simulator's words, ~28 pseudo-tokens. */
const REPLY_TOKENS = 28;

async function countersOf(engines: readonly EngineSimulator[]): Promise<CacheCounters[]> {
  return Promise.all(engines.map(async (engine) => parseCacheCounters(await (await fetch(`${engine.url}/metrics`)).text())));
}

/** Runs one row: starts and stops everything it uses. */
export async function runRow(spec: RowSpec): Promise<RowResult> {
  const engines = await startPrefixEngines(spec.seed);
  try {
    const target = await startTarget(spec, engines);
    const base = { workload: spec.workload.name, router: spec.router, replicas: spec.replicas, shedding: spec.shedding };
    if ('unavailable' in target) return unavailableRow(base, target.unavailable);
    try {
      return { ...base, description: target.description, ...(await measureRow(spec, engines, target)) };
    } finally {
      await target.stop();
    }
  } finally {
    await closePrefixEngines(engines);
  }
}

function unavailableRow(base: Pick<RowResult, 'workload' | 'router' | 'replicas' | 'shedding'>, reason: string): RowResult {
  return {
    ...base,
    unavailable: reason,
    description: '',
    window: summarizeWindow([], 0, 0),
    hitRatio: Number.NaN,
    hitTokens: 0,
    queriedTokens: 0,
    engineRequests: 0,
    running: runningBalance([]),
    coreBusy: [],
    routerCpuUsPerRequest: undefined,
  };
}

type Measured = Omit<RowResult, 'workload' | 'router' | 'replicas' | 'shedding' | 'description' | 'unavailable'>;

/** Plays the workload against `target` and takes the window's readings. */
async function measureRow(spec: RowSpec, engines: EngineSimulator[], target: Target): Promise<Measured> {
  const cores = cpus().length;
  const readCores = () => Array.from({ length: cores }, (_, i) => coreTimes(i));
  const windowEnd = spec.warmupMs + spec.durationMs;
  const pool = new Pool(target.url, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  const samples: number[][] = [];
  const start = performance.now();
  const since = () => performance.now() - start;
  const sampler = setInterval(() => {
    const t = since();
    if (t >= spec.warmupMs && t < windowEnd) samples.push(engines.map((engine) => engine.scheduler.running));
  }, 100);
  // Readings at the window's edges, taken by timers while the load runs.
  const at = <T>(ms: number, read: () => Promise<T> | T): Promise<T> => sleep(Math.max(0, ms - since())).then(read);
  const requests = () => engines.reduce((n, engine) => n + engine.requests, 0);
  const first = Promise.all([at(spec.warmupMs, () => countersOf(engines)), at(spec.warmupMs, readCores), at(spec.warmupMs, () => cpuMs(target.pids())), at(spec.warmupMs, requests)]);
  const last = Promise.all([at(windowEnd, () => countersOf(engines)), at(windowEnd, readCores), at(windowEnd, () => cpuMs(target.pids())), at(windowEnd, requests)]);
  let records: TurnRecord[];
  try {
    records = await play(spec, pool, start);
  } finally {
    clearInterval(sampler);
    await pool.close();
  }
  const [[countersBefore, coresBefore, cpuBefore, requestsBefore], [countersAfter, coresAfter, cpuAfter, requestsAfter]] = await Promise.all([first, last]);
  const window = summarizeWindow(records, spec.warmupMs, windowEnd);
  const hits = hitRatio(countersBefore, countersAfter);
  const completed = (window.completedPerS * spec.durationMs) / 1000;
  return {
    window,
    hitRatio: hits.ratio,
    hitTokens: hits.hits,
    queriedTokens: hits.queries,
    engineRequests: requestsAfter - requestsBefore,
    running: runningBalance(samples),
    coreBusy: coreBusy(coresBefore, coresAfter),
    routerCpuUsPerRequest: target.pids().length === 0 || completed === 0 ? undefined : ((cpuAfter - cpuBefore) * 1000) / completed,
  };
}

/**
 * Plays the workload: conversations start on schedule; each turn is sent
 * when due, its reply read and resent in the next turn's history. No turn is
 * due at or after the window's end; what is still running `drainMs` later is
 * abandoned (and counts as failed). A conversation ends at its first shed or
 * failed turn: the user gives up. Resolves with every turn's record.
 *
 * Multi-turn conversations live tens of seconds, so a run whose
 * conversations all start at zero would spend that long ramping up (fewer
 * requests than offered, more first turns). Instead the run starts with the
 * conversations a steady state has under way (arrival rate × mean lifetime),
 * each at a random later turn of its script, with stand-in replies for the
 * turns before the run (see standInReplies), their next turns spread over
 * the first few seconds; the warm-up absorbs their one cold request each.
 */
async function play(spec: RowSpec, pool: Pool, start: number): Promise<TurnRecord[]> {
  const endMs = spec.warmupMs + spec.durationMs;
  const records: TurnRecord[] = [];
  const abandon = new AbortController();
  const since = () => performance.now() - start;

  /** Plays conversation `index` from `firstTurn` (earlier replies stood in), that turn due at `firstDueMs`; resolves when it is over. */
  const converse = async (index: number, firstDueMs: number, firstTurn = 0): Promise<void> => {
    const script = spec.workload.conversation(index);
    const replies = standInReplies(spec.seed, index, firstTurn, REPLY_TOKENS);
    let due = firstDueMs;
    for (let turn = firstTurn; turn < script.turns; turn++) {
      if (turn > firstTurn) due = since() + script.thinkMs(turn);
      if (due >= endMs || abandon.signal.aborted) return;
      const wait = due - since();
      if (wait >= 1) await sleep(wait);
      const body = turnBody(MODEL, FLEET.outputTokens, script, turn, replies);
      const sentMs = since();
      const outcome = await chatTurn(pool, body, `${spec.id}-${index}-${turn}`, abandon.signal);
      const failed = outcome.error !== undefined;
      records.push({
        dueMs: due,
        sendLagMs: sentMs - due,
        ttftMs: outcome.firstDataAt === undefined ? undefined : outcome.firstDataAt - start - due,
        endMs: outcome.endedAt - start,
        outcome: !failed ? 'ok' : outcome.shed ? 'shed' : 'failed',
        error: abandon.signal.aborted && failed ? `not finished ${spec.drainMs / 1000} s after the window` : outcome.error,
      });
      if (failed) return;
      replies.push(outcome.reply);
    }
  };

  const running: Promise<void>[] = [];
  const random = seededRng(spec.seed);
  const w = spec.workload;
  if (w.meanTurns > 1) {
    const turnS = (FLEET.ttftMs + FLEET.itlMs * (FLEET.outputTokens + 1) + w.meanThinkMs) / 1000;
    const underWay = Math.round(spec.conversationsPerS * w.meanTurns * turnS);
    for (let i = 0; i < underWay; i++) {
      const index = UNDER_WAY_INDEX + i;
      const turns = w.conversation(index).turns;
      running.push(converse(index, random() * turnS * 1000, 1 + Math.floor(random() * (turns - 1))));
    }
  }
  const gapMs = 1000 / spec.conversationsPerS;
  // One-turn workloads ramp up over the first part of the warm-up (arrivals thinned), so a
  // prompt everyone shares is computed once per engine, not once per request of a cold burst.
  const rampMs = w.meanTurns > 1 ? 0 : Math.min(RAMP_MS, spec.warmupMs / 2);
  let index = 0;
  // 1 - random() is in (0, 1], so the log is finite.
  for (let t = -Math.log(1 - random()) * gapMs; t < endMs; t += -Math.log(1 - random()) * gapMs) {
    if (t < rampMs && random() * rampMs > t) continue;
    const wait = t - since();
    if (wait >= 1) await sleep(wait);
    running.push(converse(index++, t));
  }
  const all = Promise.all(running);
  const deadline = new AbortController();
  await Promise.race([all, sleep(Math.max(0, endMs + spec.drainMs - since()), undefined, { signal: deadline.signal }).catch(() => undefined)]);
  deadline.abort();
  abandon.abort();
  await all;
  return records;
}

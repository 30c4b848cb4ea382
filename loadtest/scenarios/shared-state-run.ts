/**
 * One measured run of the shared-state benchmark: a fresh rig of replicas
 * (and an emptied Redis, when it takes part), one load spec, and everything
 * the report needs read around it: the engines' queues every 100 ms, their
 * session records, the routers' CPU, the commands Redis processed, and the
 * routers' own counters (requests, session moves, fleet load age) scraped
 * at the end. Anything a run does while load flows (an engine joining,
 * Redis going away) is its `during` hook.
 */
import type { RedisServer } from '../../tests/kit/redis/redis-server.ts';
import type { LoadSpec } from '../bench/load-spec.ts';
import type { EngineSimulator } from '../sim/server.ts';
import { measure, type Measurement } from './measure.ts';
import { QueueSampler, summarizeQueues, type QueueSummary } from './queue-sampler.ts';
import { perRequest, waitingImbalance } from './shared-state-figures.ts';
import type { LateEngine } from './shared-state-late-engine.ts';
import { LATE_ENGINE, SAMPLE_PERIOD_MS } from './shared-state-plan.ts';
import { scrapeMetrics, sumByLabel, sumOf } from './shared-state-prom.ts';
import { commandsBetween, flushRedis, readCommandCounts, type CommandCounts } from './shared-state-redis.ts';
import { startRig, type Rig, type SharedStateWiring } from './shared-state-rig.ts';
import { snapshotSessions, type SessionRecords } from './shared-state-sessions.ts';
import { cpuMs } from './systems.ts';

/** What every run shares: the engines, the late engine, the Redis, how to generate load. */
export interface Bench {
  /** The four engines, in plan order. */
  readonly engines: readonly EngineSimulator[];
  readonly late: LateEngine;
  readonly redis: RedisServer;
  /** Load-generator processes. */
  readonly generators: number;
  readonly quiet: boolean;
}

/** One run. */
export interface RunSetup<T> {
  readonly label: string;
  readonly replicas: number;
  /** Share state through the bench's Redis. */
  readonly redis: boolean;
  /** List the late engine's URL to the routers (it joins only if `during` makes it). */
  readonly lateEngine: boolean;
  /** More router flags. */
  readonly args?: readonly string[];
  readonly spec: Omit<LoadSpec, 'target'>;
  /** After the rig is up, before load (e.g. take Redis away). */
  readonly beforeLoad?: (rig: Rig) => Promise<void>;
  /** Started with the load; `clock` is ms since then. Awaited after the load ends. */
  readonly during?: (rig: Rig, clock: () => number) => Promise<T>;
}

/** What one run measured. */
export interface RunResult<T> {
  readonly label: string;
  readonly replicas: number;
  readonly redis: boolean;
  readonly wiring: SharedStateWiring;
  readonly formedInMs: number | undefined;
  readonly measurement: Measurement;
  /** The four engines' queues from the end of warm-up on. */
  readonly queues: QueueSummary;
  /** Largest time-averaged waiting queue over the mean (see waitingImbalance). */
  readonly waitingImbalance: number;
  /** Requests the routers answered (their `switchyard_requests_total`), warm-up included. */
  readonly requests: number;
  /** Routers' CPU over the run per request (ms). */
  readonly cpuMsPerRequest: number;
  /** Commands Redis executed over the run (INFO: calls made inside scripts included); undefined without Redis or when it could not be read. */
  readonly commands: CommandCounts | undefined;
  readonly commandsPerRequest: number;
  /**
   * Commands the routers sent and got answered (their own
   * `switchyard_shared_state_command_duration_seconds` counts), by command:
   * the round trips, a script call being one. Empty without Redis.
   */
  readonly roundTripsByCommand: Readonly<Record<string, number>>;
  readonly roundTripsPerRequest: number;
  /** `switchyard_session_moves_total` summed over replicas by reason; empty when no replica exports it. */
  readonly movesByReason: Readonly<Record<string, number>>;
  /** Sum of the moves metric; undefined when no replica exports it. */
  readonly moves: number | undefined;
  /** Mean `switchyard_fleet_load_age_seconds` over replicas at the end; undefined when absent. */
  readonly fleetLoadAgeS: number | undefined;
  /** Session records of the four engines, then the late engine's when it joined. */
  readonly sessions: SessionRecords;
  readonly during: T | undefined;
}

/** Adds `name`'s samples by `label` over several expositions. */
function sumOver(texts: readonly string[], name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const text of texts) for (const [value, n] of Object.entries(sumByLabel(text, name, label))) out[value] = (out[value] ?? 0) + n;
  return out;
}

interface Counters {
  readonly requests: number;
  readonly moves: number | undefined;
  readonly movesByReason: Record<string, number>;
  readonly roundTripsByCommand: Record<string, number>;
  readonly fleetLoadAgeS: number | undefined;
}

async function countersAtEnd(rig: Rig): Promise<Counters> {
  const texts = await Promise.all(rig.routers.map((router) => scrapeMetrics(router.adminUrl as string).catch(() => '')));
  const movesByReason = sumOver(texts, 'switchyard_session_moves_total', 'reason');
  const moves = texts.map((t) => sumOf(t, 'switchyard_session_moves_total'));
  const ages = texts.flatMap((t) => {
    const age = sumOf(t, 'switchyard_fleet_load_age_seconds');
    return age === undefined ? [] : [age];
  });
  return {
    requests: texts.reduce((sum, t) => sum + (sumOf(t, 'switchyard_requests_total') ?? 0), 0),
    moves: moves.every((m) => m === undefined) ? undefined : moves.reduce<number>((sum, m) => sum + (m ?? 0), 0),
    movesByReason,
    roundTripsByCommand: sumOver(texts, 'switchyard_shared_state_command_duration_seconds_count', 'command'),
    fleetLoadAgeS: ages.length === 0 ? undefined : ages.reduce((a, b) => a + b, 0) / ages.length,
  };
}

const readCommandsOrUndefined = (url: string) => readCommandCounts(url).catch(() => undefined);

/** Runs one setup on a fresh rig and stops the rig (and the late engine) however it ends. */
export async function runOnce<T>(bench: Bench, setup: RunSetup<T>): Promise<RunResult<T>> {
  for (const engine of bench.engines) engine.sessions.clear();
  if (setup.redis) await flushRedis(bench.redis.url);
  const urls = bench.engines.map((e) => e.url);
  // Capacities configured, as an operator would (annotation or config): sessions are then placed in shares that fit each engine.
  const capacities = new Map([...bench.engines.map((e) => [e.url, e.knobs.maxSeqs] as const), [bench.late.url, LATE_ENGINE.maxSeqs] as const]);
  const rig = await startRig({ replicas: setup.replicas, backends: setup.lateEngine ? [...urls, bench.late.url] : urls, ready: urls, capacities, ...(setup.redis ? { redisUrl: bench.redis.url } : {}), ...(setup.args === undefined ? {} : { args: setup.args }) });
  try {
    await setup.beforeLoad?.(rig);
    const commandsBefore = setup.redis ? await readCommandsOrUndefined(bench.redis.url) : undefined;
    const pids = rig.routers.flatMap((r) => r.pids());
    const cpuBefore = cpuMs(pids);
    const started = performance.now();
    const clock = () => performance.now() - started;
    const sampler = new QueueSampler(bench.engines, SAMPLE_PERIOD_MS, () => clock() >= setup.spec.warmupMs);
    const during = setup.during?.(rig, clock);
    // A hook that fails must not leave its rejection unheard while the load still runs.
    during?.catch(() => {});
    let measurement: Measurement;
    let samples: number[][];
    try {
      measurement = await measure(rig.front, setup.spec, { processes: bench.generators, quiet: bench.quiet }, setup.label);
    } finally {
      samples = sampler.stop();
    }
    const queues = summarizeQueues(samples, bench.engines.length);
    const duringResult = await during;
    const cpu = cpuMs(pids) - cpuBefore;
    const commandsAfter = commandsBefore === undefined ? undefined : await readCommandsOrUndefined(bench.redis.url);
    const commands = commandsBefore !== undefined && commandsAfter !== undefined ? commandsBetween(commandsBefore, commandsAfter) : undefined;
    const counters = await countersAtEnd(rig);
    const late = bench.late.engine;
    return {
      label: setup.label,
      replicas: setup.replicas,
      redis: setup.redis,
      wiring: rig.wiring,
      formedInMs: rig.formedInMs,
      measurement,
      queues,
      waitingImbalance: waitingImbalance(queues.meanWaiting),
      requests: counters.requests,
      cpuMsPerRequest: perRequest(cpu, counters.requests),
      commands,
      commandsPerRequest: perRequest(commands?.total ?? Number.NaN, counters.requests),
      roundTripsByCommand: setup.redis ? counters.roundTripsByCommand : {},
      roundTripsPerRequest: setup.redis ? perRequest(Object.values(counters.roundTripsByCommand).reduce((a, b) => a + b, 0), counters.requests) : Number.NaN,
      movesByReason: counters.movesByReason,
      moves: counters.moves,
      // Routers without Redis may still export the gauge (as 0): it means nothing there.
      fleetLoadAgeS: setup.redis ? counters.fleetLoadAgeS : undefined,
      sessions: snapshotSessions([...bench.engines.map((e) => e.sessions), ...(late === undefined ? [] : [late.sessions])]),
      during: duringResult,
    };
  } finally {
    await rig.stop();
    await bench.late.leave();
  }
}

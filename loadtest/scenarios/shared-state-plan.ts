/**
 * What the shared-state benchmark runs: the engine fleet (unequal sizes, so
 * a session's share must fit its engine's capacity), the loads, the router
 * flags every replica gets, and how long each part runs in full, quick and
 * smoke mode.
 */
import type { EngineSpec } from './fleet.ts';

/** The one model every engine serves. */
export const MODEL = 'shared-state-model';

/**
 * Four engines of unequal capacity (4, 8, 8 and 16 slots, same speed): an
 * unweighted spread of sessions sends the small one a quarter of them while
 * it holds a ninth of the capacity, so it saturates at half load and
 * conversations spill unless their first assignment fits the engine.
 */
export const ENGINES: readonly EngineSpec[] = [
  { name: 'E1', maxSeqs: 4, ttftMs: 30, itlMs: 5, outputTokens: 32 },
  { name: 'E2', maxSeqs: 8, ttftMs: 30, itlMs: 5, outputTokens: 32 },
  { name: 'E3', maxSeqs: 8, ttftMs: 30, itlMs: 5, outputTokens: 32 },
  { name: 'E4', maxSeqs: 16, ttftMs: 30, itlMs: 5, outputTokens: 32 },
];

/** The engine that joins halfway through the 50% session runs (listed from the start, listening only then). */
export const LATE_ENGINE: EngineSpec = { name: 'E5', maxSeqs: 8, ttftMs: 30, itlMs: 5, outputTokens: 32 };

/** Conversations the session runs spread requests over (`x-session-id: user-N`). */
export const USERS = 400;

/** Offered load as a share of the four engines' measured capacity. */
export const LOADS = { calm: 0.5, busy: 0.85 } as const;

/** The quota part: one tenant's limit and what its key offers. */
export const QUOTA = { limitPerS: 50, offeredPerS: 100, tolerancePerS: 5 } as const;

/** How often the engines' schedulers are sampled (ms). */
export const SAMPLE_PERIOD_MS = 100;

/**
 * Flags every replica gets: scrapes four times a second (as the replicas
 * benchmark), and a model probe that retries an endpoint whose models are
 * unknown every 200 ms, so the late engine becomes routable within a fraction
 * of a second of listening.
 */
export const ROUTER_ARGS: readonly string[] = ['--scrape-interval-ms', '250', '--models-refresh-retry-ms', '200'];

/** Which 85% session runs to make (three replicas each). */
export type BusyRun = 'off' | 'redis' | 'outage';

/** Which quota runs to make: Redis up, Redis killed after the fleet formed, no Redis at all. */
export type QuotaMode = 'shared' | 'degraded' | 'off';

/** Durations (ms) and the parts of the scenario a mode runs. */
export interface Plan {
  readonly warmupMs: number;
  /** Measured part of each session run (50% and 85%). */
  readonly sessionMs: number;
  /** Replica counts of the 50% session runs (one replica runs alone, more behind nginx). */
  readonly stickinessReplicas: readonly number[];
  readonly busyRuns: readonly BusyRun[];
  /** Measured part of each least-load run. */
  readonly leastLoadMs: number;
  /** Interleaved rounds of the four least-load configurations; 0 skips the part. */
  readonly leastLoadRounds: number;
  readonly quotaMs: number;
  readonly quotaModes: readonly QuotaMode[];
  /** Sequential calibration streams per engine. */
  readonly calibrationSamples: number;
}

/** The plans; smoke keeps the correctness checks (failures through a Redis outage) and little else. */
export const PLANS: Readonly<Record<'full' | 'quick' | 'smoke', Plan>> = {
  full: { warmupMs: 3000, sessionMs: 30_000, stickinessReplicas: [1, 3], busyRuns: ['off', 'redis', 'outage'], leastLoadMs: 20_000, leastLoadRounds: 5, quotaMs: 60_000, quotaModes: ['shared', 'degraded', 'off'], calibrationSamples: 5 },
  quick: { warmupMs: 2000, sessionMs: 12_000, stickinessReplicas: [1, 3], busyRuns: ['off', 'redis', 'outage'], leastLoadMs: 6000, leastLoadRounds: 5, quotaMs: 15_000, quotaModes: ['shared', 'degraded', 'off'], calibrationSamples: 3 },
  smoke: { warmupMs: 500, sessionMs: 2000, stickinessReplicas: [], busyRuns: ['redis', 'outage'], leastLoadMs: 0, leastLoadRounds: 0, quotaMs: 2000, quotaModes: ['shared'], calibrationSamples: 2 },
};

/** The plan a run's options select. */
export function planFor(options: { readonly smoke: boolean; readonly quick: boolean }): Plan {
  return PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
}

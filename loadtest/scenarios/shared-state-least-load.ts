/**
 * Least-load across replicas: keyless streams (no session key, and one-turn
 * prompts with no history for the default profile's prefix walk to follow,
 * so it ranks them by load) at 85% of capacity, through one router and through
 * three, without and with Redis. Three replicas that each see only their own
 * in-flight requests pile onto the engine each thinks is emptiest; with the
 * fleet-wide counts they should balance like one router does. The four
 * configurations run in interleaved rounds (so drift over time hits all of
 * them alike) and each is reported as the median of its rounds with the
 * spread.
 */
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { spread, type Spread } from './shared-state-figures.ts';
import { MODEL, type Plan } from './shared-state-plan.ts';
import { runOnce, type Bench, type RunResult } from './shared-state-run.ts';

const KEYLESS: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: 0, headers: {}, users: 0, checkIds: true };

/** One configuration of the comparison. */
export interface LeastLoadConfig {
  readonly replicas: 1 | 3;
  readonly redis: boolean;
}

/** The configurations, in the order each round runs them. */
export const LEAST_LOAD_CONFIGS: readonly LeastLoadConfig[] = [
  { replicas: 1, redis: false },
  { replicas: 3, redis: false },
  { replicas: 1, redis: true },
  { replicas: 3, redis: true },
];

/** A configuration's rounds, condensed. */
export interface LeastLoadSummary {
  readonly config: LeastLoadConfig;
  readonly runs: readonly RunResult<undefined>[];
  /** Largest time-averaged engine waiting over the mean, per round. */
  readonly imbalance: Spread;
  readonly ttftP99: Spread;
  readonly meanWaiting: Spread;
}

/** Label of a configuration, for tables and logs. */
export function configLabel(config: LeastLoadConfig): string {
  return `${config.replicas === 1 ? '1 router' : '3 replicas'}, ${config.redis ? 'Redis' : 'no Redis'}`;
}

/** Runs `plan.leastLoadRounds` interleaved rounds of the four configurations. */
export async function leastLoadRounds(bench: Bench, plan: Plan, ratePerS: number): Promise<LeastLoadSummary[]> {
  const runs = new Map<LeastLoadConfig, RunResult<undefined>[]>(LEAST_LOAD_CONFIGS.map((c) => [c, []]));
  for (let round = 0; round < plan.leastLoadRounds; round++) {
    for (const config of LEAST_LOAD_CONFIGS) {
      const spec: Omit<LoadSpec, 'target'> = { request: KEYLESS, mode: { kind: 'open', ratePerS, maxConnections: 1000 }, warmupMs: plan.warmupMs, durationMs: plan.leastLoadMs, idPrefix: `ll-${round}-${config.replicas}-${config.redis ? 'r' : 'n'}`, seed: 100 + round };
      const run = await runOnce<undefined>(bench, { label: `${ratePerS} req/s keyless, ${configLabel(config)}, round ${round + 1}`, replicas: config.replicas, redis: config.redis, lateEngine: false, spec });
      runs.get(config)?.push(run);
    }
  }
  return LEAST_LOAD_CONFIGS.map((config) => {
    const list = runs.get(config) ?? [];
    return {
      config,
      runs: list,
      imbalance: spread(list.map((r) => r.waitingImbalance)),
      ttftP99: spread(list.map((r) => r.measurement.ttft.p99)),
      meanWaiting: spread(list.map((r) => r.queues.meanWaiting.reduce((a, b) => a + b, 0) / Math.max(1, r.queues.meanWaiting.length))),
    };
  });
}

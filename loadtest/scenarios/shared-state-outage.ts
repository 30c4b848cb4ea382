/**
 * The Redis outage played during a run: killed (the connection drops, every
 * command fails fast), restarted empty on the same port (as a replaced pod
 * would come back), then paused with SIGSTOP (the socket stays open and
 * nothing answers: only timeouts and the breaker can tell) and resumed. The
 * times recorded are when each step took effect, on the caller's clock, so
 * convergence is measured from the real recovery, not the planned one.
 */
import type { RedisServer } from '../../tests/kit/redis/redis-server.ts';

/** The steps, in order, each at a share of the run's length. */
export const OUTAGE_STEPS = [
  { step: 'kill', at: 0.2 },
  { step: 'restart', at: 0.4 },
  { step: 'pause', at: 0.6 },
  { step: 'resume', at: 0.8 },
] as const;

export type OutageStep = (typeof OUTAGE_STEPS)[number]['step'];

/** When each step took effect (ms on the caller's clock). */
export type OutageTimes = Readonly<Record<OutageStep, number>>;

/** The planned offset of each step (ms from the start) for a run of `totalMs`. */
export function outagePlan(totalMs: number): OutageTimes {
  return Object.fromEntries(OUTAGE_STEPS.map(({ step, at }) => [step, Math.round(totalMs * at)])) as Record<OutageStep, number>;
}

/**
 * Plays the outage against `redis` on `clock` (ms, starting near 0) and
 * resolves with when each step took effect. However it ends, Redis is left
 * running and answering.
 */
export async function playOutage(redis: RedisServer, totalMs: number, clock: () => number): Promise<OutageTimes> {
  const plan = outagePlan(totalMs);
  const times: Partial<Record<OutageStep, number>> = {};
  const until = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - clock())));
  let killed = false;
  let paused = false;
  try {
    await until(plan.kill);
    killed = true;
    await redis.kill();
    times.kill = clock();
    await until(plan.restart);
    await redis.restart();
    killed = false;
    times.restart = clock();
    await until(plan.pause);
    paused = true;
    redis.pause();
    times.pause = clock();
    await until(plan.resume);
    redis.resume();
    paused = false;
    times.resume = clock();
  } finally {
    if (paused) redis.resume();
    if (killed) await redis.restart();
  }
  return times as OutageTimes;
}

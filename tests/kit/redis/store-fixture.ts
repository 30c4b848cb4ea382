/**
 * A SharedStore built the way the router builds it (validated `redis.*`
 * config, createRedisClient, breaker settings from the config), with an
 * observer that records what the store reported, for tests against real
 * Redis topologies.
 */
import assert from 'node:assert/strict';
import { configSchema } from '../../../router/config/schema.ts';
import { readSecretFile } from '../../../router/config/secret-file.ts';
import type { BreakerState } from '../../../router/state/breaker.ts';
import { createRedisClient } from '../../../router/state/redis-client.ts';
import { SharedStore, sharedStoreSettings, type CommandFailure, type SharedStoreObserver } from '../../../router/state/shared-store.ts';

/** What a store reported, in order. */
export interface RecordingObserver extends SharedStoreObserver {
  readonly failures: CommandFailure[];
  readonly statuses: string[];
  readonly reasons: string[];
  readonly breaker: BreakerState[];
}

/** An observer that keeps every report. */
export function recorder(): RecordingObserver {
  const r: RecordingObserver = {
    failures: [],
    statuses: [],
    reasons: [],
    breaker: [],
    commandDone: () => {},
    commandFailed: (_command, failure) => void r.failures.push(failure),
    breakerMoved: (to) => void r.breaker.push(to),
    statusChanged: (status, reason) => {
      r.statuses.push(status);
      r.reasons.push(reason);
    },
  };
  return r;
}

/** A store for `redis` (the `redis.*` block as a user writes it); secret files are read as the router reads them. */
export function storeFor(redis: Record<string, unknown>, observer: SharedStoreObserver = recorder()): SharedStore {
  const config = configSchema.parse({ redis });
  return new SharedStore(
    createRedisClient(config.redis, readSecretFile),
    sharedStoreSettings(config.redis),
    observer,
  );
}

/** Polls `condition` every 10 ms; throws `message` after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 5_000, message = 'condition not met in time'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${message} (after ${timeoutMs} ms)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A refused command never waits for the network (no offline queue, no retry): its answer comes
 * before a timer of half the tests' 50 ms command timeout can fire. Raced against that timer
 * rather than timed: a loaded machine that deschedules the process delays both alike, where a
 * wall-clock bound failed at 38 ms with six suites sharing two cores.
 */
const AT_ONCE_MS = 25;

/** Waits `ms` of real time (while a client tries to connect). */
export const during = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Asserts the store stays degraded for `ms` (several reconnect attempts with
 * the 50 ms → 1 s backoff), answering every command `undefined` at once.
 */
export async function staysDegraded(store: SharedStore, observer: RecordingObserver, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  let asked = 0;
  while (Date.now() < deadline) {
    const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), AT_ONCE_MS));
    const answer = await Promise.race([store.run('get', (c) => c.get(store.key('k'))).then((value) => ({ value })), late]);
    assert.notEqual(answer, 'late', `a command was still unanswered after ${AT_ONCE_MS} ms of timers`);
    assert.equal(answer === 'late' ? 'late' : answer.value, undefined);
    asked++;
    await during(50);
  }
  assert.equal(store.status, 'degraded');
  assert.deepEqual(observer.statuses, [], 'never reported up');
  assert.ok(asked >= 5 && observer.failures.length === asked, `${asked} commands, ${observer.failures.length} failures`);
}

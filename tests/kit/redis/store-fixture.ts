/**
 * A SharedStore built the way the router builds it (validated `redis.*`
 * config, createRedisClient, breaker settings from the config), with an
 * observer that records what the store reported, for tests against real
 * Redis topologies.
 */
import { configSchema } from '../../../router/config/schema.ts';
import { readSecretFile } from '../../../router/config/secret-file.ts';
import type { BreakerState } from '../../../router/state/breaker.ts';
import { createRedisClient } from '../../../router/state/redis-client.ts';
import { SharedStore, type CommandFailure, type SharedStoreObserver } from '../../../router/state/shared-store.ts';

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
    { keyPrefix: config.redis.keyPrefix, breaker: { failures: config.redis.breakerFailures, openMs: config.redis.breakerOpenMs } },
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

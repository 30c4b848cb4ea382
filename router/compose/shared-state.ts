/**
 * What the replicas share: through Redis when `redis.*` configures it (the
 * store, the fleet load, the shared safe start, session assignments), and
 * the tenant quotas, shared through Redis or local and in full without it.
 */
import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { readSecretFile } from '../config/secret-file.ts';
import type { LoadView } from '../load/load-view.ts';
import type { ReplicaCount } from '../load/replica-count.ts';
import type { Logger } from '../log.ts';
import { SharedStateMetrics } from '../metrics/shared-state-metrics.ts';
import type { TaskFailureReporter } from '../state/background-task.ts';
import { FleetLoad } from '../state/fleet-load.ts';
import { newReplicaId } from '../state/fleet-membership.ts';
import { FleetSafeStart } from '../state/fleet-safe-start.ts';
import { TenantQuotas } from '../state/quota.ts';
import { createRedisClient, redisConfigured } from '../state/redis-client.ts';
import { PREFIX_PLACEMENT_SPACE, SharedAssignments } from '../state/shared-assignments.ts';
import { SharedStore, sharedStoreSettings } from '../state/shared-store.ts';

/**
 * The safe start is shared every this many fleet-load publishes: limits move
 * at scrapes (a second apart by default), so sharing them as often as the
 * in-flight counts would only double the Redis traffic.
 */
const SAFE_START_SHARE_INTERVALS = 4;

/** Redis and what the replicas share through it. The router starts and stops the fleet load and safe start, and closes the store. */
export interface RedisState {
  readonly store: SharedStore;
  readonly fleet: FleetLoad;
  /** Undefined with the safe start off. */
  readonly safeStart: FleetSafeStart | undefined;
  readonly sessions: SharedAssignments;
  /** Where each rare prefix group's last request went, fleet-wide (kept as long as sessions are). */
  readonly prefixPlacements: SharedAssignments<string>;
}

/** The shared state and its metrics. */
export interface SharedState {
  /** Redis commands, breaker, session lookups, auth failures and quota rejections; registered even without Redis. */
  readonly metrics: SharedStateMetrics;
  /** Undefined without Redis configured. */
  readonly redis: RedisState | undefined;
  /** Tenant quotas; undefined without API keys. The router starts and stops them. */
  readonly quotas: TenantQuotas | undefined;
}

/** What {@link buildSharedState} needs besides the config. */
export interface SharedStateDeps {
  readonly view: LoadView;
  readonly replicas: ReplicaCount;
  /** Where the shared-state metrics register. */
  readonly registry: Registry;
  readonly logger: Logger;
  /** Whether tenants are known (auth.apiKeysFile): quotas exist only then. */
  readonly tenants: boolean;
  /** Told of every store status change, so /readyz shows it at once. */
  readonly published: () => void;
  readonly onTaskFailure: TaskFailureReporter;
}

/**
 * Builds the shared state; nothing is started. The store connects in the
 * background: a Redis that is down at start-up is a degraded start, not a
 * failed one.
 */
export function buildSharedState(config: Config, deps: SharedStateDeps): SharedState {
  // The metrics read the store that reports to them: their gauges read `redis` at scrape time, after it is built.
  const metrics: SharedStateMetrics = new SharedStateMetrics(
    deps.registry,
    redisConfigured(config.redis)
      ? { status: () => redis?.store.status ?? 'degraded', fleetReplicas: () => redis?.fleet.replicasSeen ?? 1, fleetLoadAgeSeconds: () => redis?.fleet.ageSeconds() ?? 0 }
      : undefined,
  );
  const redis: RedisState | undefined = redisConfigured(config.redis) ? redisState(config, metrics, deps) : undefined;
  const quotas = deps.tenants ? tenantQuotas(config, redis, deps.onTaskFailure) : undefined;
  return { metrics, redis, quotas };
}

/** The store, fleet load, safe start and session assignments over the Redis `config.redis` names. */
function redisState(config: Config, metrics: SharedStateMetrics, deps: SharedStateDeps): RedisState {
  const { logger, onTaskFailure } = deps;
  const settings = config.redis;
  const store = new SharedStore(createRedisClient(settings, readSecretFile), sharedStoreSettings(settings), {
    commandDone: (command, seconds) => metrics.observeCommand(command, seconds),
    commandFailed: (command, failure) => metrics.countFailure(command, failure),
    breakerMoved: (to) => metrics.countBreakerTransition(to),
    statusChanged: (status, reason) => {
      if (status === 'up') logger.info({ reason }, 'shared state (Redis) up: routing on fleet-wide state');
      else logger.warn({ reason }, "shared state (Redis) degraded: routing on this replica's own state until it recovers");
      deps.published();
    },
  });
  const replicaId = newReplicaId();
  const fleet = new FleetLoad(store, deps.view, { replicaId, publishIntervalMs: settings.publishIntervalMs, replicaTtlMs: settings.replicaTtlMs, onTaskFailure, replicas: deps.replicas });
  const safeStart = config.load.safeStart.enabled
    ? new FleetSafeStart(store, deps.view, { replicaId, intervalMs: SAFE_START_SHARE_INTERVALS * settings.publishIntervalMs, replicaTtlMs: settings.replicaTtlMs, onTaskFailure })
    : undefined;
  const sessions = new SharedAssignments(store, config.sessions, (result) => metrics.countSessionLookup(result), Date.now, onTaskFailure);
  const prefixPlacements = new SharedAssignments<string>(store, config.sessions, (result) => metrics.countPrefixPlacementLookup(result), Date.now, onTaskFailure, PREFIX_PLACEMENT_SPACE);
  return { store, fleet, safeStart, sessions, prefixPlacements };
}

/** Tenant quotas: shared through Redis when it is configured, local and in full otherwise. */
function tenantQuotas(config: Config, redis: RedisState | undefined, onTaskFailure: TaskFailureReporter): TenantQuotas {
  return new TenantQuotas({
    onTaskFailure,
    shared: redis === undefined ? undefined : { store: redis.store, membership: redis.fleet },
    checkTimeoutMs: config.quotas.checkTimeoutMs,
    replicaTtlMs: config.redis.replicaTtlMs,
  });
}

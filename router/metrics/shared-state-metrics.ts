/**
 * Metrics of the shared state (Redis) and of what it enables: fleet-wide
 * load, shared sticky sessions, authentication and quotas. Registered on
 * the router's registry beside RouterMetrics; the series that only mean
 * something with Redis configured (up, fleet replicas, fleet load age) are
 * not registered without it, so an alert on them never fires for a router
 * that runs alone on purpose.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ASSIGNMENT_MOVES, type AssignmentMove } from '../scheduling/candidate.ts';
import {
  AUTH_FAILURE_REASONS,
  BREAKER_STATES,
  COMMAND_FAILURES,
  QUOTA_LIMITS,
  SESSION_LOOKUP_RESULTS,
  listLabelValues,
  type AuthFailureReason,
  type BreakerState,
  type CommandFailure,
  type QuotaLimit,
  type SessionLookupResult,
} from './label-values.ts';

/** Live values of the shared state, read at scrape time (only with Redis configured). */
export interface SharedStateSources {
  status(): 'up' | 'degraded';
  /** Replicas whose counts routing uses now, this one included (1 while degraded). */
  fleetReplicas(): number;
  /** Seconds since the last successful fleet read (since start-up before the first). */
  fleetLoadAgeSeconds(): number;
}

export class SharedStateMetrics {
  readonly #commandDuration: Histogram<'command'>;
  readonly #failures: Counter<'command' | 'kind'>;
  readonly #breaker: Counter<'to'>;
  readonly #moves: Counter<'reason'>;
  readonly #lookups: Counter<'result'>;
  readonly #placementLookups: Counter<'result'>;
  readonly #quotaRejections: Counter<'tenant' | 'limit'>;
  readonly #authFailures: Counter<'reason'>;

  /** `sources` is undefined when no Redis is configured: the Redis-only series are then not registered at all. */
  constructor(registry: Registry, sources: SharedStateSources | undefined) {
    const registers = [registry];
    this.#commandDuration = new Histogram({
      name: 'switchyard_shared_state_command_duration_seconds',
      help: 'Time Redis took to answer a command, by command (answered commands only; failures are counted apart).',
      labelNames: ['command'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers,
    });
    this.#failures = new Counter({
      name: 'switchyard_shared_state_failures_total',
      help: `Redis commands that got no answer, by command and kind: ${listLabelValues(COMMAND_FAILURES, { server: 'Redis answered with an error', invalid_reply: 'an answer the caller does not accept', breaker_open: 'not sent because the circuit breaker was open' })}. The request went on with local state.`,
      labelNames: ['command', 'kind'],
      registers,
    });
    this.#breaker = new Counter({
      name: 'switchyard_shared_state_breaker_transitions_total',
      help: `Circuit breaker transitions of the Redis connection, by the state entered (${listLabelValues(BREAKER_STATES)}).`,
      labelNames: ['to'],
      registers,
    });
    this.#moves = new Counter({
      name: 'switchyard_session_moves_total',
      help: `Sessions moved off their assigned engine (shared assignments, Redis), by why the engine failed the scheduling filters: ${listLabelValues(ASSIGNMENT_MOVES, { gone: 'left the set or stopped serving the model' })}.`,
      labelNames: ['reason'],
      registers,
    });
    this.#lookups = new Counter({
      name: 'switchyard_session_lookups_total',
      help: `Session assignment lookups by result: ${listLabelValues(SESSION_LOOKUP_RESULTS, { cache: "this replica's recent copy", miss: 'no assignment yet', unavailable: 'Redis degraded: rendezvous hashing decides' })}.`,
      labelNames: ['result'],
      registers,
    });
    this.#placementLookups = new Counter({
      name: 'switchyard_prefix_placement_lookups_total',
      help: `Shared placement lookups of rare prefix groups (prefix affinity with Redis), by result: ${listLabelValues(SESSION_LOOKUP_RESULTS, { cache: "this replica's recent copy", miss: 'not placed yet', unavailable: "Redis degraded: the replica's own placement decides" })}.`,
      labelNames: ['result'],
      registers,
    });
    this.#quotaRejections = new Counter({
      name: 'switchyard_quota_rejections_total',
      help: `Requests refused with 429 for their tenant quota, by tenant and limit (${listLabelValues(QUOTA_LIMITS)}).`,
      labelNames: ['tenant', 'limit'],
      registers,
    });
    this.#authFailures = new Counter({
      name: 'switchyard_auth_failures_total',
      help: `Traffic-port requests refused with 401, by reason (${listLabelValues(AUTH_FAILURE_REASONS)}).`,
      labelNames: ['reason'],
      registers,
    });
    // A label-less gauge always exports a value once registered (0 after a reset), so absence means not registering.
    if (sources !== undefined) registerRedisGauges(registers, sources);
  }

  observeCommand(command: string, seconds: number): void {
    this.#commandDuration.labels(command).observe(seconds);
  }

  countFailure(command: string, kind: CommandFailure): void {
    this.#failures.labels(command, kind).inc();
  }

  countBreakerTransition(to: BreakerState): void {
    this.#breaker.labels(to).inc();
  }

  countSessionMove(reason: AssignmentMove): void {
    this.#moves.labels(reason).inc();
  }

  countSessionLookup(result: SessionLookupResult): void {
    this.#lookups.labels(result).inc();
  }

  countPrefixPlacementLookup(result: SessionLookupResult): void {
    this.#placementLookups.labels(result).inc();
  }

  /** `tenant` comes from the API keys file (a bounded, operator-chosen set). */
  countQuotaRejection(tenant: string, limit: QuotaLimit): void {
    this.#quotaRejections.labels(tenant, limit).inc();
  }

  countAuthFailure(reason: AuthFailureReason): void {
    this.#authFailures.labels(reason).inc();
  }
}

/** The gauges that mean something only with Redis configured. */
function registerRedisGauges(registers: Registry[], sources: SharedStateSources): void {
  new Gauge({
    name: 'switchyard_shared_state_up',
    help: '1 while Redis is connected and answering, 0 while degraded (routing on local state). No series when Redis is not configured.',
    registers,
    collect() {
      this.set(sources.status() === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'switchyard_fleet_replicas',
    help: 'Router replicas whose in-flight counts were live at the last fleet read, this one included (1 while degraded: it knows only itself). No series without Redis.',
    registers,
    collect() {
      this.set(sources.fleetReplicas());
    },
  });
  new Gauge({
    name: 'switchyard_fleet_load_age_seconds',
    help: "Seconds since this replica last read the other replicas' in-flight counts (since start-up before the first read): about the publish interval while Redis is up, growing while it is not. No series without Redis.",
    registers,
    collect() {
      this.set(sources.fleetLoadAgeSeconds());
    },
  });
}

/**
 * Metrics of the shared state (Redis) and of what it enables: fleet-wide
 * load, shared sticky sessions, authentication and quotas. Registered on
 * the router's registry beside {@link RouterMetrics}; the series that only
 * mean something with Redis configured (up, fleet replicas, fleet load age)
 * are absent without it, so an alert on them never fires for a router that
 * runs alone on purpose.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Live values read at scrape time. */
export interface SharedStateSources {
  /** `off` (no Redis configured: no series), `up` or `degraded`. */
  status(): 'off' | 'up' | 'degraded';
  /** Replicas that published within their heartbeat at the last fleet read, this one included; undefined before the first. */
  fleetReplicas(): number | undefined;
  /** Seconds since the fleet counts in use were read; undefined when none are in use. */
  fleetLoadAgeSeconds(): number | undefined;
}

/** Why a session left its assigned engine; the `reason` label. */
export type SessionMoveReason = 'saturated' | 'ejected' | 'gone';

/** Where a session's assignment came from; the `result` label. */
export type SessionLookupResult = 'cache' | 'redis' | 'miss' | 'unavailable';

export class SharedStateMetrics {
  readonly #commandDuration: Histogram<'command'>;
  readonly #failures: Counter<'command' | 'kind'>;
  readonly #breaker: Counter<'to'>;
  readonly #moves: Counter<'reason'>;
  readonly #lookups: Counter<'result'>;
  readonly #quotaRejections: Counter<'tenant' | 'limit'>;
  readonly #authFailures: Counter<'reason'>;

  constructor(registry: Registry, sources: SharedStateSources) {
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
      help: 'Redis commands that got no answer, by command and kind (timeout, connection, server, breaker_open: not sent because the circuit breaker was open). The request went on with local state.',
      labelNames: ['command', 'kind'],
      registers,
    });
    this.#breaker = new Counter({
      name: 'switchyard_shared_state_breaker_transitions_total',
      help: 'Circuit breaker transitions of the Redis connection, by the state entered (open, half-open, closed).',
      labelNames: ['to'],
      registers,
    });
    this.#moves = new Counter({
      name: 'switchyard_session_moves_total',
      help: 'Sessions moved off their assigned engine (shared assignments, Redis), by why the engine failed the scheduling filters: saturated, ejected, gone (left the set or stopped serving the model).',
      labelNames: ['reason'],
      registers,
    });
    this.#lookups = new Counter({
      name: 'switchyard_session_lookups_total',
      help: "Session assignment lookups by result: cache (this replica's recent copy), redis, miss (no assignment yet), unavailable (Redis degraded: rendezvous hashing decides).",
      labelNames: ['result'],
      registers,
    });
    this.#quotaRejections = new Counter({
      name: 'switchyard_quota_rejections_total',
      help: 'Requests refused with 429 for their tenant quota, by tenant and limit (rate, concurrency).',
      labelNames: ['tenant', 'limit'],
      registers,
    });
    this.#authFailures = new Counter({
      name: 'switchyard_auth_failures_total',
      help: 'Traffic-port requests refused with 401, by reason (missing, invalid).',
      labelNames: ['reason'],
      registers,
    });
    new Gauge({
      name: 'switchyard_shared_state_up',
      help: '1 while Redis is connected and answering, 0 while degraded (routing on local state). No series when Redis is not configured.',
      registers,
      collect() {
        this.reset();
        const status = sources.status();
        if (status !== 'off') this.set(status === 'up' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'switchyard_fleet_replicas',
      help: 'Router replicas whose in-flight counts were live at the last fleet read, this one included. No series without Redis.',
      registers,
      collect() {
        this.reset();
        const replicas = sources.fleetReplicas();
        if (replicas !== undefined) this.set(replicas);
      },
    });
    new Gauge({
      name: 'switchyard_fleet_load_age_seconds',
      help: "Age of the other replicas' in-flight counts routing uses now (their publish interval adds to it). No series while none are in use.",
      registers,
      collect() {
        this.reset();
        const age = sources.fleetLoadAgeSeconds();
        if (age !== undefined) this.set(age);
      },
    });
  }

  observeCommand(command: string, seconds: number): void {
    this.#commandDuration.labels(command).observe(seconds);
  }

  countFailure(command: string, kind: string): void {
    this.#failures.labels(command, kind).inc();
  }

  countBreakerTransition(to: string): void {
    this.#breaker.labels(to).inc();
  }

  countSessionMove(reason: SessionMoveReason): void {
    this.#moves.labels(reason).inc();
  }

  countSessionLookup(result: SessionLookupResult): void {
    this.#lookups.labels(result).inc();
  }

  /** `tenant` comes from the API keys file (a bounded, operator-chosen set). */
  countQuotaRejection(tenant: string, limit: 'rate' | 'concurrency'): void {
    this.#quotaRejections.labels(tenant, limit).inc();
  }

  countAuthFailure(reason: 'missing' | 'invalid'): void {
    this.#authFailures.labels(reason).inc();
  }
}

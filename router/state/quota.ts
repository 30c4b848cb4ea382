/**
 * Per-tenant quotas (requests per second, requests in progress), enforced
 * across router replicas through Redis, and locally when Redis cannot answer.
 *
 * The failure story and the rules that follow:
 * - A quota check may cost a request at most one script call, and at most
 *   `checkTimeoutMs` (20 ms by default) of waiting, timed here: the store's
 *   own command timeout may be longer, and a breaker that has not opened yet
 *   would let each request wait it out.
 * - When Redis gives no answer in time (down, paused, slow, refusing) the
 *   degraded limit applies: a local limiter with each limit divided by the
 *   live-replica count last seen before Redis went away. Allowing every
 *   replica the full limit would multiply it by the replica count exactly
 *   when nobody can see it happen.
 * - Without Redis configured at all, the local limiter enforces the full
 *   limits: one replica, or an operator who accepted per-replica limits.
 * - Requests in progress are counted per replica: each replica owns one key
 *   per tenant holding its own count, written as "set to my count" with the
 *   heartbeat TTL (`redis.replicaTtlMs`). The holder rewrites it at most once
 *   per quarter of the TTL while it holds requests, so a killed replica's
 *   count vanishes with its heartbeat and a lost write heals itself.
 * - This replica's own count is kept here, always: it is the truth the
 *   shared key mirrors and what the degraded limit checks.
 * - Releasing is fire-and-forget, exactly once per admitted request.
 */
import type { QuotaLimit } from '../metrics/label-values.ts';
import { runTask, type TaskFailureReporter } from './background-task.ts';
import type { FleetMembership } from './fleet-membership.ts';
import { gcraStep } from './gcra.ts';
import { QUOTA_SCRIPT, concurrencyKeyName, decodeQuotaAnswer, rateKeyName, type SharedQuotaAnswer } from './quota-script.ts';
import type { SharedStore } from './shared-store.ts';

/** A tenant's limits, as the API keys file gives them. Absent: not limited. */
export interface TenantLimits {
  /** Sustained requests per second (> 0). */
  readonly requestsPerSecond?: number | undefined;
  /** Requests that may pass at once before the rate applies (≥ 1); default: one second's worth, at least 1. */
  readonly burst?: number | undefined;
  /** Requests in progress at once, fleet-wide (≥ 1). */
  readonly maxConcurrent?: number | undefined;
}

/** The rate limit's state after a check, for the `x-ratelimit-*` headers. */
export interface RateStatus {
  /** Requests that may pass at once (the burst in force: divided among replicas while degraded). */
  readonly limit: number;
  /** Requests that would still pass right now. */
  readonly remaining: number;
  /** Time until the full burst is available again (ms). */
  readonly resetMs: number;
}

/** Which side decided: Redis, the degraded local limiter, or the local limiter without Redis configured. */
export type QuotaDecidedBy = 'shared' | 'degraded' | 'local';

/** The answer to one request's quota check. */
export type QuotaOutcome =
  | {
      readonly admitted: true;
      readonly decidedBy: QuotaDecidedBy;
      /** Present when the tenant has a rate limit. */
      readonly rate: RateStatus | undefined;
      /** Gives back the request's concurrency slot; call once when the request settles (later calls do nothing). */
      readonly release: () => void;
    }
  | {
      readonly admitted: false;
      readonly decidedBy: QuotaDecidedBy;
      readonly limit: QuotaLimit;
      /** When to try again (ms, > 0). */
      readonly retryAfterMs: number;
      readonly rate: RateStatus | undefined;
    };

/** Settings and collaborators of {@link TenantQuotas}. */
export interface TenantQuotasDeps {
  /** Redis and the live replicas it shows; undefined when no Redis is configured (local limits, in full). */
  readonly shared: { readonly store: SharedStore; readonly membership: FleetMembership } | undefined;
  /** Longest wait for the shared check (ms). */
  readonly checkTimeoutMs: number;
  /** TTL of this replica's in-progress keys (ms): the replica heartbeat TTL. */
  readonly replicaTtlMs: number;
  /** Monotonic clock (ms) for the local limiter and the refresh schedule. */
  readonly now?: () => number;
  /** Told when a refresh round fails unexpectedly. */
  readonly onTaskFailure?: TaskFailureReporter | undefined;
}

/** Per-tenant bookkeeping of this replica. */
interface TenantState {
  /** Requests of this tenant in progress on this replica (admitted and not released, or being checked). */
  held: number;
  /** When this replica last wrote its in-progress key (ms on `now`), or -Infinity. */
  writtenAt: number;
  /** The local limiter's TAT (ms on `now`). */
  tat: number | undefined;
}

/** Retry-After for a concurrency refusal: nobody knows when a request in progress will end. */
const CONCURRENCY_RETRY_MS = 1_000;

export class TenantQuotas {
  readonly #deps: TenantQuotasDeps;
  readonly #now: () => number;
  readonly #tenants = new Map<string, TenantState>();
  #refresh: NodeJS.Timeout | undefined;

  constructor(deps: TenantQuotasDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => performance.now());
  }

  /** Starts rewriting this replica's in-progress keys every quarter of their TTL (only with Redis). */
  start(): void {
    if (this.#deps.shared === undefined || this.#refresh !== undefined) return;
    const report = this.#deps.onTaskFailure ?? (() => {});
    this.#refresh = setInterval(() => void runTask('quota_refresh', () => this.refreshHeld(), report), this.#deps.replicaTtlMs / 4);
    this.#refresh.unref();
  }

  stop(): void {
    clearInterval(this.#refresh);
    this.#refresh = undefined;
  }

  /** This replica's requests in progress for `tenant` (counted while limited by maxConcurrent). */
  held(tenant: string): number {
    return this.#tenants.get(tenant)?.held ?? 0;
  }

  /**
   * Checks one request of `tenant` against `limits` and, when it passes,
   * takes a rate slot and a concurrency slot. Never rejects; waits at most
   * `checkTimeoutMs` for Redis.
   */
  async acquire(tenant: string, limits: TenantLimits): Promise<QuotaOutcome> {
    const state = this.#state(tenant);
    const concurrent = limits.maxConcurrent !== undefined;
    // Reserved before the check, so the count Redis is told includes this request.
    if (concurrent) state.held++;
    const shared = this.#deps.shared;
    let outcome: QuotaOutcome | undefined;
    if (shared !== undefined) {
      const answer = await this.#askRedis(shared.store, shared.membership, tenant, limits, state);
      if (answer !== undefined) outcome = this.#fromShared(tenant, limits, state, answer);
    }
    outcome ??= this.#decideLocally(tenant, limits, state, shared === undefined ? 1 : shared.membership.liveReplicaCount());
    if (!outcome.admitted && concurrent) state.held--;
    return outcome;
  }

  /** Rewrites this replica's in-progress keys not written for a quarter of their TTL. The refresh timer calls it. */
  refreshHeld(): void {
    const shared = this.#deps.shared;
    if (shared === undefined) return;
    const now = this.#now();
    for (const [tenant, state] of this.#tenants) {
      if (state.held > 0 && now - state.writtenAt >= this.#deps.replicaTtlMs / 4) this.#writeHeld(shared, tenant, state, now);
    }
  }

  #state(tenant: string): TenantState {
    let state = this.#tenants.get(tenant);
    if (state === undefined) this.#tenants.set(tenant, (state = { held: 0, writtenAt: -Infinity, tat: undefined }));
    return state;
  }

  async #askRedis(store: SharedStore, membership: FleetMembership, tenant: string, limits: TenantLimits, state: TenantState): Promise<SharedQuotaAnswer | undefined> {
    const { replicaTtlMs, checkTimeoutMs } = this.#deps;
    const keys = [store.key(rateKeyName(tenant))];
    if (limits.maxConcurrent !== undefined) {
      keys.push(store.key(concurrencyKeyName(tenant, membership.replicaId)));
      for (const id of membership.liveReplicaIds()) if (id !== membership.replicaId) keys.push(store.key(concurrencyKeyName(tenant, id)));
    }
    const rps = limits.requestsPerSecond;
    const args = [rps === undefined ? 0 : 1e6 / rps, burstOf(limits), limits.maxConcurrent ?? 0, state.held, replicaTtlMs];
    const sentAt = this.#now();
    // A reply of any other shape is no answer (counted as invalid_reply): the degraded limit decides.
    const answer = await withinMs(store.script(QUOTA_SCRIPT, keys, args, decodeQuotaAnswer), checkTimeoutMs);
    // An admitting script wrote this replica's count: the refresh schedule starts from there.
    if (answer?.allowed === true && limits.maxConcurrent !== undefined) state.writtenAt = sentAt;
    return answer;
  }

  #fromShared(tenant: string, limits: TenantLimits, state: TenantState, answer: SharedQuotaAnswer): QuotaOutcome {
    const rate = limits.requestsPerSecond === undefined ? undefined : { limit: Math.floor(burstOf(limits)), remaining: answer.allowed ? (answer.remaining ?? 0) : 0, resetMs: answer.resetMs };
    if (!answer.allowed) return { admitted: false, decidedBy: 'shared', limit: answer.limit, retryAfterMs: Math.max(1, answer.retryAfterMs), rate };
    return { admitted: true, decidedBy: 'shared', rate, release: this.#releaser(tenant, state, limits) };
  }

  /** The local limiter: each limit divided by `share` (the live replicas; 1 without Redis). */
  #decideLocally(tenant: string, limits: TenantLimits, state: TenantState, share: number): QuotaOutcome {
    const decidedBy: QuotaDecidedBy = this.#deps.shared === undefined ? 'local' : 'degraded';
    const divisor = Math.max(1, share);
    if (limits.maxConcurrent !== undefined && state.held > Math.max(1, Math.floor(limits.maxConcurrent / divisor))) {
      return { admitted: false, decidedBy, limit: 'concurrency', retryAfterMs: CONCURRENCY_RETRY_MS, rate: undefined };
    }
    let rate: RateStatus | undefined;
    if (limits.requestsPerSecond !== undefined) {
      const burst = Math.max(1, burstOf(limits) / divisor);
      const step = gcraStep(state.tat, this.#now(), (1000 * divisor) / limits.requestsPerSecond, burst);
      rate = { limit: Math.floor(burst), remaining: step.remaining, resetMs: step.resetMs };
      if (!step.allowed) return { admitted: false, decidedBy, limit: 'rate', retryAfterMs: step.retryAfterMs, rate };
      state.tat = step.tat;
    }
    return { admitted: true, decidedBy, rate, release: this.#releaser(tenant, state, limits) };
  }

  #releaser(tenant: string, state: TenantState, limits: TenantLimits): () => void {
    if (limits.maxConcurrent === undefined) return () => {};
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.held--;
      const shared = this.#deps.shared;
      if (shared !== undefined) this.#writeHeld(shared, tenant, state, this.#now());
    };
  }

  /** Fire-and-forget: sets this replica's in-progress key to its count (deleted at 0). */
  #writeHeld({ store, membership }: { store: SharedStore; membership: FleetMembership }, tenant: string, state: TenantState, now: number): void {
    const key = store.key(concurrencyKeyName(tenant, membership.replicaId));
    const held = state.held;
    state.writtenAt = now;
    // The reply ('OK', a count of deleted keys) carries nothing this replica needs: it is not kept.
    void store.run('quota_held', (client): Promise<unknown> => (held > 0 ? client.set(key, String(held), 'PX', this.#deps.replicaTtlMs) : client.del(key)), () => true);
  }
}

/** The burst in force: as configured, or one second's worth (at least 1). */
function burstOf(limits: TenantLimits): number {
  return limits.burst ?? Math.max(1, Math.ceil(limits.requestsPerSecond ?? 1));
}

/** `promise`'s value, or undefined when it takes longer than `ms`. */
async function withinMs<T>(promise: Promise<T | undefined>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The bounded router queue for requests whose every candidate is saturated
 * (`admission.queueLength` 0 turns it off and sheds at once). A waiting
 * request is admitted as soon as a candidate frees up, in priority order and,
 * within a priority, in turns across tenants (API keys): one tenant's sixty
 * waiters must not stand between another tenant's single request and the
 * next free slot, as plain first-come first-served let them. Each waiter
 * takes a round number at arrival (start-time fair queueing): one past its
 * tenant's newest waiter, and never below the round being served, so a
 * tenant that arrives late or rarely goes next in line and a tenant's backlog
 * spreads over later rounds. One tenant may also hold at most
 * `tenantShare` of the queue while others wait. Without API keys every
 * request is one tenant and the order is first-come first-served.
 * A waiter leaves when its client disconnects, and is shed when its wait
 * passes `maxWaitMs`. Admission turns a request away before it enters when
 * the queue ahead of it would take longer than that to drain
 * (admission-control.ts).
 */
import type { Schedule } from '../scheduling/profiles/profile.ts';
import { priorityRank, type Priority } from '../scheduling/priority.ts';

/** Queue bounds. */
export interface WaitQueueSettings {
  /** Most requests waiting at once (0: no queue). */
  readonly maxLength: number;
  /** Longest wait before the request is shed (ms). */
  readonly maxWaitMs: number;
  /**
   * Share of `maxLength` (0-1) one tenant may hold while another tenant
   * waits; 1: no limit. A tenant over its share is turned away, and has its
   * newest waiter pushed out by another tenant's arrival at a full queue.
   */
  readonly tenantShare?: number;
}

/** The tenant of requests without an API key: all of them are one. */
const NO_TENANT = '';

/** How a wait ended. */
export type WaitOutcome<T> =
  | Schedule<T>
  | { readonly kind: 'expired' }
  | { readonly kind: 'full' }
  | { readonly kind: 'gone' };

interface Waiter<T> {
  readonly rank: number;
  readonly tenant: string;
  /** Fair-queueing round within the rank; lower goes first. */
  readonly round: number;
  /** Waiters with the same key get the same answer while capacity is unchanged (model, priority, pinned engine). */
  readonly key: string | undefined;
  readonly enqueuedAt: number;
  readonly decide: () => Schedule<T>;
  readonly finish: (outcome: WaitOutcome<T>) => void;
}

/** The wait queue. One per router process. */
export class WaitQueue<T> {
  readonly #settings: WaitQueueSettings;
  /** Kept sorted by priority rank, then round, then arrival. */
  readonly #waiters: Waiter<T>[] = [];
  /** Per rank: the round of the waiter admitted last. */
  readonly #servedRound = new Map<number, number>();
  /** Per rank and tenant: its waiters and the round of its newest. */
  readonly #tenants = new Map<string, { count: number; lastRound: number }>();
  #notifying = false;

  constructor(settings: WaitQueueSettings) {
    this.#settings = settings;
  }

  /** False when the queue is off. */
  get enabled(): boolean {
    return this.#settings.maxLength > 0;
  }

  get length(): number {
    return this.#waiters.length;
  }

  /** Longest wait before a waiter is shed (ms). */
  get maxWaitMs(): number {
    return this.#settings.maxWaitMs;
  }

  /**
   * Waiters a newcomer of `priority` and `tenant` would queue behind: those
   * of a higher priority, and those of its own priority in an earlier round
   * (all of its own tenant's, and of each other tenant's at most one more
   * than its own tenant has waiting).
   */
  ahead(priority: Priority, tenant = NO_TENANT): number {
    const rank = priorityRank(priority);
    const round = this.#roundFor(rank, tenant);
    let count = 0;
    for (const waiter of this.#waiters) {
      if (waiter.rank > rank) break;
      if (waiter.rank < rank || waiter.round <= round) count++;
    }
    return count;
  }

  /** Waiters `tenant` has in the queue, at any priority. */
  waitingOf(tenant: string): number {
    let count = 0;
    for (const waiter of this.#waiters) if (waiter.tenant === tenant) count++;
    return count;
  }

  /**
   * Waits until `decide` admits or rejects, the wait expires, the client
   * goes (`signal`), or a higher-priority arrival pushes this one out of a
   * full queue. Resolves `full` at once when the queue is full of work at
   * least as important, or when `tenant` holds its share of the queue while
   * another tenant waits.
   */
  wait(priority: Priority, decide: () => Schedule<T>, signal: AbortSignal, key?: string, tenant = NO_TENANT): Promise<WaitOutcome<T>> {
    const rank = priorityRank(priority);
    if (this.#overShare(tenant, 1)) return Promise.resolve({ kind: 'full' });
    if (this.#waiters.length >= this.#settings.maxLength && !this.#evictOverShare(rank, tenant) && !this.#evictBelow(rank)) return Promise.resolve({ kind: 'full' });
    const round = this.#roundFor(rank, tenant);
    return new Promise((resolve) => {
      const waiter: Waiter<T> = {
        rank,
        tenant,
        round,
        key,
        enqueuedAt: performance.now(),
        decide,
        finish: (outcome) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.#remove(waiter);
          resolve(outcome);
        },
      };
      const onAbort = () => waiter.finish({ kind: 'gone' });
      const timer = setTimeout(() => waiter.finish({ kind: 'expired' }), this.#settings.maxWaitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#insert(waiter);
    });
  }

  /**
   * Capacity may have freed up (a request finished, a scrape arrived): let
   * waiting requests try again, in queue order. At most one is let go per
   * turn of the event loop: an admitted request counts against its endpoint
   * only once it has been sent, a few promise hops later, so every waiter
   * decided in the same pass would see the same free room and all be sent
   * to it (a burst's whole backlog moved from this queue into the engine's).
   * A key found saturated is not decided again in the same pass: with
   * thousands waiting for one model, every completion would otherwise
   * schedule each of them.
   */
  notify(): void {
    if (this.#waiters.length === 0 || this.#notifying) return;
    this.#notifying = true;
    const saturatedKeys = new Set<string>();
    try {
      for (const waiter of [...this.#waiters]) {
        if (waiter.key !== undefined && saturatedKeys.has(waiter.key)) continue;
        const decision = waiter.decide();
        if (decision.kind === 'saturated') {
          if (waiter.key !== undefined) saturatedKeys.add(waiter.key);
          continue;
        }
        waiter.finish(decision);
        if (decision.kind === 'admit') {
          this.#servedRound.set(waiter.rank, Math.max(this.#servedRound.get(waiter.rank) ?? 0, waiter.round));
          this.#notifyNextTurn();
          return;
        }
      }
    } finally {
      this.#notifying = false;
    }
  }

  #pending: NodeJS.Immediate | undefined;

  /** Notifies again once the request just admitted has been sent (setImmediate runs after its promise chain). */
  #notifyNextTurn(): void {
    if (this.#pending !== undefined || this.#waiters.length === 0) return;
    this.#pending = setImmediate(() => {
      this.#pending = undefined;
      this.notify();
    });
  }

  /** Ms the oldest waiter has waited (0 when empty). */
  oldestWaitMs(now = performance.now()): number {
    let oldest = 0;
    for (const waiter of this.#waiters) oldest = Math.max(oldest, now - waiter.enqueuedAt);
    return oldest;
  }

  /** Pushes out the newest waiter of the lowest priority below `rank`; false when there is none. */
  #evictBelow(rank: number): boolean {
    const last = this.#waiters.at(-1);
    if (last === undefined || last.rank <= rank) return false;
    last.finish({ kind: 'full' });
    return true;
  }

  /** The round a newcomer of `tenant` at `rank` would take. */
  #roundFor(rank: number, tenant: string): number {
    const served = this.#servedRound.get(rank) ?? 0;
    const own = this.#tenants.get(`${rank}\u0000${tenant}`);
    return own === undefined ? served : Math.max(served, own.lastRound + 1);
  }

  /**
   * True when `tenant`, with `extra` more waiters, would hold more than its
   * share of the queue while some other tenant waits. A tenant alone may
   * fill the queue: nobody else is kept out.
   */
  #overShare(tenant: string, extra: number): boolean {
    const share = this.#settings.tenantShare ?? 1;
    if (share >= 1) return false;
    const limit = Math.max(1, Math.floor(share * this.#settings.maxLength));
    const own = this.waitingOf(tenant);
    return own + extra > limit && own < this.#waiters.length;
  }

  /**
   * At a full queue, pushes out the newest waiter of the tenant holding the
   * most (at `rank` or lower priority) when that tenant is over its share
   * and the newcomer's tenant is not: a tenant that filled the queue while
   * alone gives way to the next tenant that arrives.
   */
  #evictOverShare(rank: number, tenant: string): boolean {
    const share = this.#settings.tenantShare ?? 1;
    if (share >= 1) return false;
    const limit = Math.max(1, Math.floor(share * this.#settings.maxLength));
    if (this.waitingOf(tenant) + 1 > limit) return false;
    const counts = new Map<string, number>();
    for (const waiter of this.#waiters) counts.set(waiter.tenant, (counts.get(waiter.tenant) ?? 0) + 1);
    let victim: Waiter<T> | undefined;
    for (const waiter of this.#waiters) {
      if (waiter.rank < rank || waiter.tenant === tenant || (counts.get(waiter.tenant) ?? 0) <= limit) continue;
      if (victim === undefined || waiter.rank > victim.rank || (waiter.rank === victim.rank && waiter.enqueuedAt >= victim.enqueuedAt)) victim = waiter;
    }
    if (victim === undefined) return false;
    victim.finish({ kind: 'full' });
    return true;
  }

  #insert(waiter: Waiter<T>): void {
    let at = this.#waiters.length;
    while (at > 0) {
      const before = this.#waiters[at - 1] as Waiter<T>;
      if (before.rank < waiter.rank || (before.rank === waiter.rank && before.round <= waiter.round)) break;
      at--;
    }
    this.#waiters.splice(at, 0, waiter);
    const id = `${waiter.rank}\u0000${waiter.tenant}`;
    const own = this.#tenants.get(id);
    if (own === undefined) this.#tenants.set(id, { count: 1, lastRound: waiter.round });
    else {
      own.count++;
      own.lastRound = Math.max(own.lastRound, waiter.round);
    }
  }

  #remove(waiter: Waiter<T>): void {
    const at = this.#waiters.indexOf(waiter);
    if (at === -1) return;
    this.#waiters.splice(at, 1);
    const id = `${waiter.rank}\u0000${waiter.tenant}`;
    const own = this.#tenants.get(id);
    if (own !== undefined && --own.count === 0) this.#tenants.delete(id);
  }
}

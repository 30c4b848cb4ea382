/**
 * The bounded router queue for requests whose every candidate is saturated
 * (`admission.queueLength` 0 turns it off and sheds at once). A waiting
 * request is admitted as soon as a candidate frees up, in priority order and
 * first-come first-served within a priority; it leaves when its client
 * disconnects, and is shed when its wait passes `maxWaitMs`. Admission turns
 * a request away before it enters when the queue ahead of it would take
 * longer than that to drain (admission-control.ts).
 */
import type { Schedule } from '../scheduling/profile.ts';
import { priorityRank, type Priority } from '../scheduling/priority.ts';

/** Queue bounds. */
export interface WaitQueueSettings {
  /** Most requests waiting at once (0: no queue). */
  readonly maxLength: number;
  /** Longest wait before the request is shed (ms). */
  readonly maxWaitMs: number;
}

/** How a wait ended. */
export type WaitOutcome<T> =
  | Schedule<T>
  | { readonly kind: 'expired' }
  | { readonly kind: 'full' }
  | { readonly kind: 'gone' };

interface Waiter<T> {
  readonly rank: number;
  /** Waiters with the same key get the same answer while capacity is unchanged (model, priority, pinned engine). */
  readonly key: string | undefined;
  readonly enqueuedAt: number;
  readonly decide: () => Schedule<T>;
  readonly finish: (outcome: WaitOutcome<T>) => void;
}

/** The wait queue. One per router process. */
export class WaitQueue<T> {
  readonly #settings: WaitQueueSettings;
  /** Kept sorted by priority rank, then arrival. */
  readonly #waiters: Waiter<T>[] = [];
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

  /** Waiters a newcomer of `priority` would queue behind: those of the same or a higher priority. */
  ahead(priority: Priority): number {
    const rank = priorityRank(priority);
    let at = this.#waiters.length;
    while (at > 0 && (this.#waiters[at - 1] as Waiter<T>).rank > rank) at--;
    return at;
  }

  /**
   * Waits until `decide` admits or rejects, the wait expires, the client
   * goes (`signal`), or a higher-priority arrival pushes this one out of a
   * full queue. Resolves `full` at once when the queue is full of work at
   * least as important.
   */
  wait(priority: Priority, decide: () => Schedule<T>, signal: AbortSignal, key?: string): Promise<WaitOutcome<T>> {
    const rank = priorityRank(priority);
    if (this.#waiters.length >= this.#settings.maxLength && !this.#evictBelow(rank)) return Promise.resolve({ kind: 'full' });
    return new Promise((resolve) => {
      const waiter: Waiter<T> = {
        rank,
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
      let at = this.#waiters.length;
      while (at > 0 && (this.#waiters[at - 1] as Waiter<T>).rank > rank) at--;
      this.#waiters.splice(at, 0, waiter);
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

  #remove(waiter: Waiter<T>): void {
    const at = this.#waiters.indexOf(waiter);
    if (at !== -1) this.#waiters.splice(at, 1);
  }
}

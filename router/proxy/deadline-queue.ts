/**
 * Deadlines of one fixed duration behind a single Node timer: the attempt
 * deadlines the forwarder sets on every upstream request.
 *
 * Why not a `setTimeout` each: nearly every deadline is cancelled long before
 * it passes, and at moderate rates, with nothing else in flight, Node builds
 * and drops a timer list and a priority-queue entry for each one (about 2 µs
 * a request in CPU profiles at 2,000 requests a second). Deadlines added with
 * one duration expire in the order they were added, so a FIFO with lazy
 * removal is enough: adding is a push, cancelling a flag, and the one timer
 * waits for the oldest entry, so it fires about once per duration, not once
 * per request. Cancelled entries are dropped from the front as the timer
 * passes them, and the array is compacted once they outnumber the live ones,
 * so memory follows what is in flight, not the rate.
 */

/** A deadline in a queue; `cancel` it once the work it guards is done. */
export interface Deadline {
  cancel(): void;
}

/** The clock and timer a queue uses (Node's by default; tests pass their own). */
export interface DeadlineClock {
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
}

const NODE_CLOCK: DeadlineClock = {
  now: () => performance.now(),
  // Unref'd: an armed timer may wait on entries already cancelled, and must not hold the process open.
  setTimeout: (fire, ms) => setTimeout(fire, ms).unref(),
};

/** Compact once at least this many entries are cancelled (and they outnumber the live ones). */
const COMPACT_MIN = 64;

class Entry implements Deadline {
  readonly at: number;
  onExpire: (() => void) | undefined;
  readonly #queue: DeadlineQueue;

  constructor(queue: DeadlineQueue, at: number, onExpire: () => void) {
    this.#queue = queue;
    this.at = at;
    this.onExpire = onExpire;
  }

  cancel(): void {
    if (this.onExpire === undefined) return;
    this.onExpire = undefined;
    this.#queue.cancelled();
  }
}

/** Deadlines of one duration; see the module comment. */
export class DeadlineQueue {
  readonly durationMs: number;
  readonly #clock: DeadlineClock;
  #entries: Entry[] = [];
  /** Index of the oldest entry not yet passed. */
  #head = 0;
  /** Cancelled entries at or after `#head`. */
  #cancelled = 0;
  #armed = false;
  #firing = false;

  constructor(durationMs: number, clock: DeadlineClock = NODE_CLOCK) {
    this.durationMs = durationMs;
    this.#clock = clock;
  }

  /** Calls `onExpire` once `durationMs` has passed, unless the returned deadline is cancelled first. */
  add(onExpire: () => void): Deadline {
    const entry = new Entry(this, this.#clock.now() + this.durationMs, onExpire);
    this.#entries.push(entry);
    if (!this.#armed) this.#arm(this.durationMs);
    return entry;
  }

  /** Deadlines added and neither cancelled nor expired yet. */
  get pending(): number {
    return this.#entries.length - this.#head - this.#cancelled;
  }

  /** Entries held, cancelled ones not yet dropped included: at most about twice `pending`, plus a few dozen. */
  get held(): number {
    return this.#entries.length - this.#head;
  }

  /** An entry was cancelled (called by the entry). */
  cancelled(): void {
    this.#cancelled++;
    // Not while expiring: `#fire` walks the array, and a callback may cancel other entries.
    if (!this.#firing && this.#cancelled >= COMPACT_MIN && this.#cancelled > this.pending) this.#compact();
  }

  #compact(): void {
    const head = this.#head;
    this.#entries = this.#entries.filter((entry, i) => i >= head && entry.onExpire !== undefined);
    this.#head = 0;
    this.#cancelled = 0;
  }

  #arm(ms: number): void {
    this.#armed = true;
    this.#clock.setTimeout(() => this.#fire(), Math.max(0, ms));
  }

  /** Expires what has passed, drops cancelled entries ahead of the first live one, and waits for that one. */
  #fire(): void {
    this.#firing = true;
    const now = this.#clock.now();
    try {
      // Callbacks may add (a retry's new attempt) or cancel entries; `#armed` stays set so an add does not arm a second timer.
      while (this.#head < this.#entries.length) {
        const entry = this.#entries[this.#head] as Entry;
        const onExpire = entry.onExpire;
        if (onExpire !== undefined && entry.at > now) break;
        this.#head++;
        if (onExpire === undefined) this.#cancelled--;
        else {
          entry.onExpire = undefined;
          onExpire();
        }
      }
    } finally {
      // Even after a callback threw, what is left keeps its timer.
      this.#firing = false;
      this.#armed = false;
      if (this.#head === this.#entries.length) {
        this.#entries = [];
        this.#head = 0;
      } else this.#arm((this.#entries[this.#head] as Entry).at - now);
    }
  }
}

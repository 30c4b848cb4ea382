/** The count of requests open on the traffic port, which admission, the retry budget, the metrics and the drain read. */

/** What a closed request wakes. */
export interface Wakeable {
  notify(): void;
}

/**
 * Requests open on the traffic port, counted by the request lifecycle.
 * Closing one wakes the wait queue: it freed a slot somewhere, so queued
 * requests may go now.
 */
export class OpenRequests {
  #count = 0;
  readonly #queue: Wakeable;

  constructor(queue: Wakeable) {
    this.#queue = queue;
  }

  /** Requests open right now (0 or more). */
  get count(): number {
    return this.#count;
  }

  /** A request was admitted to the router. */
  increment(): void {
    this.#count++;
  }

  /** A request closed. */
  decrement(): void {
    this.#count--;
    this.#queue.notify();
  }
}

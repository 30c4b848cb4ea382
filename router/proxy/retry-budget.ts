/**
 * Bounds retries so a failing fleet cannot turn into a retry storm: retries
 * in progress may be at most `ratio` of the router's open requests, with a
 * floor of `min` so a quiet router can still retry.
 */
export class RetryBudget {
  readonly #ratio: number;
  readonly #min: number;
  readonly #active: () => number;
  #retrying = 0;

  /** `active` returns the router's open requests. */
  constructor(ratio: number, min: number, active: () => number) {
    this.#ratio = ratio;
    this.#min = min;
    this.#active = active;
  }

  /** Retries in progress. */
  get retrying(): number {
    return this.#retrying;
  }

  /** Takes a slot for one retry; pair a true answer with exactly one {@link release}. */
  tryAcquire(): boolean {
    if (this.#retrying >= Math.max(this.#min, Math.floor(this.#ratio * this.#active()))) return false;
    this.#retrying++;
    return true;
  }

  release(): void {
    this.#retrying = Math.max(0, this.#retrying - 1);
  }
}

/**
 * The router-wide budget of memory held by buffered request bodies.
 *
 * Every request body is buffered whole (routing reads it, a retry replays
 * it), and the router's caps count requests, not bytes: twelve connections
 * each sending 33 MB once raised RSS by 376 MB and held it for minutes, and a
 * few dozen could OOM-kill a pod. So bytes are reserved here before they are
 * buffered (the declared Content-Length at once, chunked bodies as chunks
 * arrive) and released when the request is over, queued or forwarded alike.
 * A body that does not fit is refused with 429, never half-buffered.
 */

/** A byte budget shared by every request of the process. */
export class BodyBudget {
  readonly capacityBytes: number;
  #usedBytes = 0;

  /** @param capacityBytes total bytes buffered bodies may hold at once (> 0). */
  constructor(capacityBytes: number) {
    this.capacityBytes = capacityBytes;
  }

  /** Bytes reserved now. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** Opens a reservation for one request; its owner must call `release()` exactly when the body is dropped. */
  open(): BodyReservation {
    return new BodyReservation(this);
  }

  /** @internal Reserves `bytes` if they fit. */
  take(bytes: number): boolean {
    if (this.#usedBytes + bytes > this.capacityBytes) return false;
    this.#usedBytes += bytes;
    return true;
  }

  /** @internal Returns `bytes` to the budget. */
  give(bytes: number): void {
    this.#usedBytes -= bytes;
  }
}

/** The bytes one request holds of the {@link BodyBudget}. */
export class BodyReservation {
  readonly #budget: BodyBudget;
  #bytes = 0;

  constructor(budget: BodyBudget) {
    this.#budget = budget;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Adds `bytes` to this reservation; false (and nothing reserved) when the budget cannot hold them. */
  grow(bytes: number): boolean {
    if (!this.#budget.take(bytes)) return false;
    this.#bytes += bytes;
    return true;
  }

  /** Returns everything held; later calls do nothing. */
  release(): void {
    this.#budget.give(this.#bytes);
    this.#bytes = 0;
  }
}

/**
 * The router's own books of one endpoint's requests: how many are open, and
 * which of them the engine's last scrape already counted.
 *
 * Outstanding work is the scrape's numbers plus what the router sent since,
 * minus what it saw finish since (load-formulas.ts), so every request must
 * be counted on exactly one side of the scrape. A request and a scrape
 * travel on different connections: one sent while the scrape is out, or
 * just before it began, may reach the engine before or after the engine
 * answers. Each request therefore gets a number (its token), and the ledger
 * keeps where the last scrape's boundary fell: below it surely counted,
 * inside the ambiguous band as many as the engine's own numbers say, above
 * it not counted. Nothing here reads a clock; callers pass the time.
 */

/** Requests sent this shortly before a scrape began are taken as not counted by it (ms). */
const SEND_GUARD_MS = 25;
/** Send times remembered for that guard. */
const RECENT_SENDS = 32;

/** One endpoint's in-flight ledger; told of every send, settle and scrape by its endpoint state. */
export class InFlightLedger {
  #inFlight = 0;
  /** Requests ever sent to this endpoint; a request's number is its token. */
  #sentTotal = 0;
  /** Requests numbered below this were sent before the last applied scrape began, so it counted them. */
  #countedBefore = 0;
  /**
   * Requests numbered from `#countedBefore` up to this were sent while the
   * last scrape was out (or just before it): it may have counted them or not.
   * `#ambiguousCounted` of those still open are taken as counted (see {@link scrapeArrived}).
   */
  #ambiguousBefore = 0;
  #ambiguousCounted = 0;
  /** `#sentTotal` when the scrape in progress began (-1: none), and how many requests numbered from there have finished. */
  #pendingMark = -1;
  #settledSincePendingMark = 0;
  /** When the last few requests were sent (epoch ms), newest last; see {@link markScrapeStart}. */
  readonly #recentSends: number[] = [];
  #sentSinceScrape = 0;
  #doneSinceScrape = 0;
  #version = 0;

  /** Requests the router has open to this endpoint right now (≥ 0). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests ever sent to this endpoint (the next request's token). */
  get sentTotal(): number {
    return this.#sentTotal;
  }

  /** Requests sent since the last scrape that are still open. */
  get sentSinceScrape(): number {
    return this.#sentSinceScrape;
  }

  /** Requests open at the last scrape that have finished since. */
  get doneSinceScrape(): number {
    return this.#doneSinceScrape;
  }

  /** A scrape began after the last one recorded (and may still be out, or have failed). */
  get awaitingScrape(): boolean {
    return this.#pendingMark >= 0;
  }

  /** Bumped by every change to the counts above, so derived values are recomputed. */
  get version(): number {
    return this.#version;
  }

  /** A request was sent at `now` (epoch ms). Returns its token; pair every begin with exactly one {@link settle}. */
  begin(now: number): number {
    this.#inFlight++;
    this.#sentSinceScrape++;
    const sends = this.#recentSends;
    if (sends.length === RECENT_SENDS) sends.shift();
    sends.push(now);
    this.#version++;
    return this.#sentTotal++;
  }

  /** Request `token` ended, however it ended. */
  settle(token: number): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (this.#countedByScrape(token)) this.#doneSinceScrape++;
    else this.#sentSinceScrape = Math.max(0, this.#sentSinceScrape - 1);
    if (this.#pendingMark >= 0 && token >= this.#pendingMark) this.#settledSincePendingMark++;
    this.#version++;
  }

  /**
   * Whether the last scrape counted request `token`, which just ended: sent
   * before it began, or one of the ambiguous requests the scrape was taken to
   * count (which of them does not matter, only how many).
   */
  #countedByScrape(token: number): boolean {
    if (token < this.#countedBefore) return true;
    if (token >= this.#ambiguousBefore || this.#ambiguousCounted === 0) return false;
    this.#ambiguousCounted--;
    return true;
  }

  /**
   * A scrape of the engine is about to be sent at `now` (epoch ms). Requests
   * sent from now on may or may not reach the engine before it answers: the
   * scrape's own numbers will say how many it counted (see {@link scrapeArrived}).
   */
  markScrapeStart(now: number): void {
    // A request sent just before the scrape may still be on its way to the engine when the
    // engine answers the scrape (they travel on different connections): it is ambiguous too.
    const sends = this.#recentSends;
    let recent = 0;
    for (let i = sends.length - 1; i >= 0 && now - (sends[i] as number) <= SEND_GUARD_MS; i--) recent++;
    this.#pendingMark = this.#sentTotal - recent;
    this.#settledSincePendingMark = 0;
  }

  /**
   * A scrape succeeded whose engine holds `ours` requests that are not the
   * other replicas' (its waiting + running, less their in-flight count).
   * Moves the scrape's boundary and returns how many of the open requests it
   * surely counted (sent before its guard), the share the safe start grows from.
   */
  scrapeArrived(ours: number): number {
    const mark = this.#pendingMark >= 0 ? this.#pendingMark : this.#sentTotal;
    // Open requests sent before the scrape's guard surely are in its numbers; those sent since may
    // or may not be. The engine's count of this replica's work says how many of them it holds, so
    // right after a scrape the estimate is the router's own open count, not that plus the ambiguous
    // ones again, which would over-count until the next scrape once they finish. Unless the engine
    // holds more than this replica has open: then others may send to it unseen (replicas without
    // shared state, other clients), the count cannot say whose the ambiguous requests are, and they
    // stay uncounted (the safe error). Requests that finished while the scrape was out do not
    // excuse the excess: a slow scrape in a burst sees many of them, and others' work beside.
    const ambiguous = Math.min(this.#inFlight, Math.max(0, this.#sentTotal - mark - this.#settledSincePendingMark));
    const surelyCounted = this.#inFlight - ambiguous;
    this.#ambiguousCounted = ours > this.#inFlight ? 0 : Math.min(ambiguous, Math.max(0, ours - surelyCounted));
    this.#countedBefore = mark;
    this.#ambiguousBefore = this.#sentTotal;
    this.#sentSinceScrape = ambiguous - this.#ambiguousCounted;
    this.#doneSinceScrape = 0;
    this.#pendingMark = -1;
    this.#version++;
    return surelyCounted;
  }
}

/**
 * Requests finished per second at one endpoint, smoothed over one-second
 * windows: how fast the engine drains, which sets the Retry-After of a shed
 * request. The endpoint state owns one and feeds it every settled request.
 */

/** Window length (ms) and the weight of the newest window. */
const WINDOW_MS = 1_000;
const ALPHA = 0.5;

/** A windowed moving average of completions per second; times are epoch ms from the caller. */
export class CompletionRate {
  #rate = 0;
  #windowStart = 0;
  #windowCount = 0;

  /** Completions per second (≥ 0) as of `now`. */
  at(now: number): number {
    this.#roll(now);
    return this.#rate;
  }

  /** Counts one finished request at `now`. */
  record(now: number): void {
    this.#roll(now);
    this.#windowCount++;
  }

  #roll(now: number): void {
    const elapsed = now - this.#windowStart;
    if (elapsed < WINDOW_MS) return;
    // Fold the finished window in, then decay for any empty windows after it.
    const windows = Math.floor(elapsed / WINDOW_MS);
    const rate = (this.#windowCount * 1000) / WINDOW_MS;
    this.#rate = this.#windowStart === 0 ? rate : this.#rate + ALPHA * (rate - this.#rate);
    this.#rate *= (1 - ALPHA) ** (windows - 1);
    this.#windowStart = now;
    this.#windowCount = 0;
  }
}

/**
 * Measures event-loop lag: how late a short repeating timer fires. A lagging
 * loop cannot serve what it already has, so new work is shed until the lag
 * falls back (the threshold is `admission.eventLoopLagMs`).
 */

/** Tick of the probe timer (ms). */
const PROBE_MS = 50;

export class EventLoopLagMonitor {
  #timer: NodeJS.Timeout | undefined;
  #expected = 0;
  #lagMs = 0;

  /** Lag of the most recent tick (ms, ≥ 0); decays quickly once the loop keeps up. */
  get lagMs(): number {
    // A blocked loop cannot tick: count the time since the overdue tick too.
    const overdue = this.#timer === undefined ? 0 : performance.now() - this.#expected;
    return Math.max(this.#lagMs, overdue);
  }

  start(): void {
    this.#expected = performance.now() + PROBE_MS;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#lagMs = Math.max(0, now - this.#expected);
      this.#expected = now + PROBE_MS;
    }, PROBE_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

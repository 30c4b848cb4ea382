/**
 * Measures event-loop lag (how late a short repeating timer fires) and says
 * how much of it is worth shedding for (the threshold is
 * `admission.eventLoopLagMs`).
 *
 * The gate used to read the latest tick alone, so one-off stalls shed: a
 * freshly started router answered its first requests with 429 (start-up
 * work tripped the gate), and a ramp of 8,000 long streams over 3 s had
 * 11-19% of them shed while the loop showed isolated spikes of 100-400 ms
 * between ticks of 0-20 ms (probes, on their own thread, stayed under
 * 13 ms). A spike is over by the time its 429 goes out, and the request it
 * turned away would have been served. What threatens the requests in
 * flight is a loop that stays behind, or falls further behind at every
 * tick. So shedding reads {@link EventLoopLagMonitor.sustainedLagMs}:
 *
 * - sustained: the least lag of the last 4 ticks (each was at least that
 *   late), or, while a tick is overdue now, the least of that overdue time
 *   and the 3 ticks before it;
 * - growing: when each of the last 4 ticks was later than the one before
 *   (and all were past the noise floor), the latest;
 * - never within `graceMs` of start, whatever the ticks say.
 *
 * Clock and timers are injected so tests drive the ticks.
 */

/** Tick of the probe timer (ms). */
const PROBE_MS = 50;
/** Consecutive late ticks that make lag sustained. */
const SUSTAINED_TICKS = 4;
/** Lag below this (ms) is timer noise, not a trend. */
const GROWING_FLOOR_MS = 25;
/** No lag shedding this long after start (ms): start-up work (first scrapes, compiling the hot path) is not overload. */
const DEFAULT_GRACE_MS = 2_000;

/** The timer functions the monitor uses (Node's by default). */
export interface LagTimers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

/** Options of {@link EventLoopLagMonitor}; all optional. */
export interface LagMonitorOptions {
  /** Monotonic clock in ms (default `performance.now`). */
  readonly now?: () => number;
  readonly timers?: LagTimers;
  /** No shedding this long after `start()` (ms). */
  readonly graceMs?: number;
}

const NODE_TIMERS: LagTimers = {
  setInterval: (callback, ms) => setInterval(callback, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

export class EventLoopLagMonitor {
  readonly #now: () => number;
  readonly #timers: LagTimers;
  readonly #graceMs: number;
  #timer: unknown;
  #running = false;
  #startedAt = 0;
  #expected = 0;
  /** Lags of the last ticks (ms), oldest first. */
  readonly #ticks: number[] = [];

  constructor(options: LagMonitorOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#timers = options.timers ?? NODE_TIMERS;
    this.#graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  }

  /** Lag of the most recent tick, or the time the next one is overdue if longer (ms, ≥ 0): what the lag metric shows. */
  get lagMs(): number {
    const last = this.#ticks.at(-1) ?? 0;
    return this.#running ? Math.max(last, this.#now() - this.#expected) : last;
  }

  /** Lag that has lasted or keeps growing (ms, ≥ 0): what shedding compares with its threshold. */
  get sustainedLagMs(): number {
    if (!this.#running) return 0;
    const now = this.#now();
    if (now - this.#startedAt < this.#graceMs) return 0;
    const ticks = this.#ticks;
    const n = ticks.length;
    if (n < SUSTAINED_TICKS - 1) return 0;
    // A blocked loop cannot tick: the time the next tick is overdue counts as one more late tick.
    const overdue = now - this.#expected;
    // Read at every request's admission: loops over the few ticks, no copies of them.
    let lag = overdue > 0 ? Math.min(overdue, leastOf(ticks, n - (SUSTAINED_TICKS - 1))) : 0;
    if (n < SUSTAINED_TICKS) return lag;
    lag = Math.max(lag, leastOf(ticks, 0));
    let growing = (ticks[0] as number) > GROWING_FLOOR_MS;
    for (let i = 1; i < n && growing; i++) growing = (ticks[i] as number) > (ticks[i - 1] as number);
    return growing ? Math.max(lag, ticks[n - 1] as number) : lag;
  }

  start(): void {
    const now = this.#now();
    this.#running = true;
    this.#startedAt = now;
    this.#expected = now + PROBE_MS;
    this.#timer = this.#timers.setInterval(() => this.tick(), PROBE_MS);
  }

  /** Records one probe tick (the timer calls it). */
  tick(): void {
    const now = this.#now();
    if (this.#ticks.length === SUSTAINED_TICKS) this.#ticks.shift();
    this.#ticks.push(Math.max(0, now - this.#expected));
    this.#expected = now + PROBE_MS;
  }

  stop(): void {
    this.#timers.clearInterval(this.#timer);
    this.#running = false;
  }
}

/** The least of `values` from index `from` on (Infinity when none). */
function leastOf(values: readonly number[], from: number): number {
  let least = Number.POSITIVE_INFINITY;
  for (let i = Math.max(0, from); i < values.length; i++) least = Math.min(least, values[i] as number);
  return least;
}

/**
 * Cuts request bodies that arrive slower than a minimum rate. A trickled body
 * (a byte every few seconds) used to hold an in-flight slot, and its share of
 * the body budget, for the whole request timeout (300 s), so a few clients
 * could hold the router's caps cheaply. As in Kestrel's minimum data rate:
 * after a grace period, a body whose average rate since its first byte
 * expected is below the minimum gets 408 and its connection closes.
 *
 * One ticker checks every body being read, so a fast body costs a Set insert
 * and delete, not a timer of its own; the ticker runs only while bodies are
 * being read (it stops at the first idle tick). The clock is injected for tests.
 */

/** A body being read, as the watch sees it. */
export interface WatchedBody {
  /** `now()` when the body started to be read (ms). */
  readonly startedAt: number;
  /** Bytes received so far. */
  readonly received: number;
  /** Called once when the body is too slow; the watch forgets it. */
  tooSlow(): void;
}

/** Minimum body rate settings. */
export interface SlowBodySettings {
  /** Lowest average rate a body may arrive at after the grace period (bytes/s; 0: off). */
  readonly minBytesPerSecond: number;
  /** Time a body may take before the rate applies (ms). */
  readonly graceMs: number;
}

/** Watches every body being read. */
export class SlowBodyWatch {
  readonly #settings: SlowBodySettings;
  readonly #now: () => number;
  readonly #bodies = new Set<WatchedBody>();
  #timer: NodeJS.Timeout | undefined;

  constructor(settings: SlowBodySettings, now: () => number = () => performance.now()) {
    this.#settings = settings;
    this.#now = now;
  }

  /** Current time on the watch's clock (ms), for {@link WatchedBody.startedAt}. */
  now(): number {
    return this.#now();
  }

  /** Watches `body` until {@link forget}; does nothing when the minimum rate is off. */
  watch(body: WatchedBody): void {
    if (this.#settings.minBytesPerSecond === 0) return;
    this.#bodies.add(body);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.check(), 1_000);
      this.#timer.unref();
    }
  }

  forget(body: WatchedBody): void {
    this.#bodies.delete(body);
  }

  /**
   * Cuts every body below the minimum rate (the ticker calls this each
   * second). The ticker stops here, at a tick that finds nothing to watch,
   * not when the last body is forgotten: most bodies arrive whole within a
   * tick, and starting and stopping a timer for each would tax every request.
   */
  check(): void {
    if (this.#bodies.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = this.#now();
    for (const body of this.#bodies) {
      const elapsedMs = now - body.startedAt;
      if (elapsedMs <= this.#settings.graceMs) continue;
      if (body.received < (this.#settings.minBytesPerSecond * elapsedMs) / 1000) {
        this.forget(body);
        body.tooSlow();
      }
    }
  }
}

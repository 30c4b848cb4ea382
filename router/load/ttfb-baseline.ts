/**
 * An engine's unloaded time to first byte of streams, learned from the
 * streams the router sends it: the lowest typical value seen (the median of
 * the last few, so one fast outlier cannot set it), drifting slowly up when
 * traffic changes for good (longer prompts). The safe start compares recent
 * first bytes against it to tell a falling-behind engine.
 */

/** Streams whose time to first byte the recent value is the median of. */
const RECENT = 5;
/** How far the baseline moves toward a higher recent value per sample, so a lasting change of traffic (longer prompts) is adopted. */
const BASELINE_DRIFT = 0.01;

/** One endpoint's first-byte baseline, owned by its safe start. */
export class TtfbBaseline {
  #baselineMs: number | undefined;
  readonly #recent: number[] = [];

  /** The unloaded time to first byte (ms), once a stream was seen. */
  get baselineMs(): number | undefined {
    return this.#baselineMs;
  }

  /** Median of the last few streams' time to first byte (ms), once one was seen. */
  get recentMs(): number | undefined {
    if (this.#recent.length === 0) return undefined;
    const sorted = [...this.#recent].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }

  /** A stream's first byte came `ms` after it was sent. */
  observe(ms: number): void {
    if (this.#recent.length === RECENT) this.#recent.shift();
    this.#recent.push(ms);
    const recent = this.recentMs as number;
    if (this.#baselineMs === undefined || recent < this.#baselineMs) this.#baselineMs = recent;
    else this.#baselineMs += BASELINE_DRIFT * (recent - this.#baselineMs);
  }
}

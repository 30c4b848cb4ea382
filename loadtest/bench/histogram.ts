/**
 * A latency histogram with logarithmic buckets (1% wide): bounded memory
 * whatever the request count, and mergeable, so several load-generating
 * processes can each keep one and the parent adds them up.
 */

/** Smallest distinguishable value (ms); anything below lands in bucket 0. */
const MIN_MS = 0.001;
/** Bucket growth factor: each bucket is 1% wider than the one before. */
const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);
/** Buckets up to ~1 hour, which no request in a benchmark outlives. */
const BUCKETS = Math.ceil(Math.log(3_600_000 / MIN_MS) / LOG_GROWTH) + 1;

/** The serialisable form, sent between processes: non-empty buckets only. */
export interface HistogramSnapshot {
  readonly buckets: readonly (readonly [index: number, count: number])[];
  readonly count: number;
  readonly sum: number;
  readonly max: number;
}

/** Percentiles in milliseconds (NaN when there were no samples). */
export interface Percentiles {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export class Histogram {
  readonly #counts = new Float64Array(BUCKETS);
  #count = 0;
  #sum = 0;
  #max = 0;

  /** Records one value (ms). Negative and NaN values are programming errors. */
  record(valueMs: number): void {
    if (!(valueMs >= 0)) throw new Error(`histogram value must be ≥ 0, got ${valueMs}`);
    const index = valueMs <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(valueMs / MIN_MS) / LOG_GROWTH));
    this.#counts[index] = (this.#counts[index] as number) + 1;
    this.#count++;
    this.#sum += valueMs;
    if (valueMs > this.#max) this.#max = valueMs;
  }

  get count(): number {
    return this.#count;
  }

  /** Adds another histogram's samples (from this or another process). */
  merge(other: HistogramSnapshot): void {
    for (const [index, count] of other.buckets) this.#counts[index] = (this.#counts[index] as number) + count;
    this.#count += other.count;
    this.#sum += other.sum;
    if (other.max > this.#max) this.#max = other.max;
  }

  snapshot(): HistogramSnapshot {
    const buckets: [number, number][] = [];
    this.#counts.forEach((count, index) => {
      if (count > 0) buckets.push([index, count]);
    });
    return { buckets, count: this.#count, sum: this.#sum, max: this.#max };
  }

  /**
   * The q-quantile (0-1) by nearest rank, as the upper bound of its bucket
   * (so it over-states by at most 1%), capped at the largest value seen.
   */
  quantile(q: number): number {
    if (this.#count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil(q * this.#count));
    let seen = 0;
    for (let index = 0; index < BUCKETS; index++) {
      seen += this.#counts[index] as number;
      if (seen >= rank) return Math.min(this.#max, MIN_MS * GROWTH ** index);
    }
    return this.#max;
  }

  percentiles(): Percentiles {
    return { count: this.#count, mean: this.#count === 0 ? Number.NaN : this.#sum / this.#count, p50: this.quantile(0.5), p90: this.quantile(0.9), p99: this.quantile(0.99), max: this.#count === 0 ? Number.NaN : this.#max };
  }

  /** A histogram holding the samples of every snapshot. */
  static of(snapshots: readonly HistogramSnapshot[]): Histogram {
    const out = new Histogram();
    for (const snapshot of snapshots) out.merge(snapshot);
    return out;
  }
}

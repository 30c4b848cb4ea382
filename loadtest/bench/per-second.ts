/**
 * A run second by second, for charts over time: per second since the start
 * (warm-up included), the failures, output tokens, times to first token and
 * inter-token gaps of the requests that ended in it. The successes per
 * second are `LoadResult.timeline`, counted by the generator as before.
 *
 * Bounded memory: a live {@link Histogram} is an 18 KB array, so only the
 * latest seconds stay live and older ones are kept as snapshots (their
 * non-empty buckets only). Requests are recorded as they end, in order, so
 * only the current second and the one before it still get samples; a
 * straggler for an older second reopens it.
 */
import { Histogram, type HistogramSnapshot } from './histogram.ts';

/** One second of a run. */
export interface SecondStats {
  /** Requests that failed in this second (bad status, corrupt answer, transport error). */
  readonly failed: number;
  /** Output tokens of the successful requests that ended in this second. */
  readonly outputTokens: number;
  /** Time to first token (ms) of those requests. */
  readonly ttft: HistogramSnapshot;
  /** Gaps between their streamed tokens (ms). */
  readonly itl: HistogramSnapshot;
}

interface LiveSecond {
  failed: number;
  outputTokens: number;
  readonly ttft: Histogram;
  readonly itl: Histogram;
}

const EMPTY: SecondStats = { failed: 0, outputTokens: 0, ttft: new Histogram().snapshot(), itl: new Histogram().snapshot() };

function freeze(live: LiveSecond): SecondStats {
  return { failed: live.failed, outputTokens: live.outputTokens, ttft: live.ttft.snapshot(), itl: live.itl.snapshot() };
}

/** Collects a run's seconds; see the file header. */
export class PerSecond {
  readonly #live = new Map<number, LiveSecond>();
  readonly #closed: (SecondStats | undefined)[] = [];

  /** A successful request that ended in `second`. */
  success(second: number, ttftMs: number, tokenGapsMs: readonly number[], outputTokens: number): void {
    const live = this.#at(second);
    live.ttft.record(ttftMs);
    for (const gap of tokenGapsMs) live.itl.record(gap);
    live.outputTokens += outputTokens;
  }

  /** A request that failed in `second`. */
  failure(second: number): void {
    this.#at(second).failed++;
  }

  /** Every second from 0 to the last one with a request, empty seconds included. */
  snapshot(): SecondStats[] {
    for (const [second, live] of this.#live) this.#closed[second] = freeze(live);
    this.#live.clear();
    return Array.from(this.#closed, (second) => second ?? EMPTY);
  }

  #at(second: number): LiveSecond {
    let live = this.#live.get(second);
    if (live !== undefined) return live;
    live = { failed: 0, outputTokens: 0, ttft: new Histogram(), itl: new Histogram() };
    const closed = this.#closed[second];
    if (closed !== undefined) {
      live.failed = closed.failed;
      live.outputTokens = closed.outputTokens;
      live.ttft.merge(closed.ttft);
      live.itl.merge(closed.itl);
      this.#closed[second] = undefined;
    }
    this.#live.set(second, live);
    for (const [older, past] of this.#live) {
      if (older >= second - 1) continue;
      this.#closed[older] = freeze(past);
      this.#live.delete(older);
    }
    return live;
  }
}

/** Adds up the seconds of several generators, second by second. */
export function mergeSeconds(runs: readonly (readonly SecondStats[])[]): SecondStats[] {
  const length = Math.max(0, ...runs.map((run) => run.length));
  return Array.from({ length }, (_, i) => {
    const seconds = runs.map((run) => run[i] ?? EMPTY);
    return {
      failed: seconds.reduce((n, s) => n + s.failed, 0),
      outputTokens: seconds.reduce((n, s) => n + s.outputTokens, 0),
      ttft: Histogram.of(seconds.map((s) => s.ttft)).snapshot(),
      itl: Histogram.of(seconds.map((s) => s.itl)).snapshot(),
    };
  });
}

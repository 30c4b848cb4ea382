/**
 * The figures of one prefix-affinity benchmark row, as pure functions of
 * what the run sampled: the engines' prefix-cache counters, their running
 * counts, the machine's per-core CPU times and the per-request records.
 */
import { quantile } from '../bench/stats.ts';

/** One engine's prefix-cache counters (tokens since it started). */
export interface CacheCounters {
  readonly queries: number;
  readonly hits: number;
}

/**
 * vLLM's `vllm:prefix_cache_queries_total` and `vllm:prefix_cache_hits_total`
 * from a Prometheus exposition, summed over their label sets; 0 for a
 * counter the text does not have.
 */
export function parseCacheCounters(exposition: string): CacheCounters {
  let queries = 0;
  let hits = 0;
  for (const match of exposition.matchAll(/^vllm:prefix_cache_(queries|hits)_total(?:\{[^}]*\})? (\S+)$/gm)) {
    const value = Number(match[2]);
    if (!Number.isFinite(value)) continue;
    if (match[1] === 'queries') queries += value;
    else hits += value;
  }
  return { queries, hits };
}

/**
 * Token-weighted prefix hit ratio over a window: Σ Δhits / Σ Δqueries across
 * engines (before and after in the same engine order). NaN when no token was
 * queried. A counter that went down (an engine restarted) counts from 0.
 */
export function hitRatio(before: readonly CacheCounters[], after: readonly CacheCounters[]): { ratio: number; hits: number; queries: number } {
  let hits = 0;
  let queries = 0;
  after.forEach((end, i) => {
    const start = before[i] ?? { queries: 0, hits: 0 };
    const restarted = end.queries < start.queries;
    queries += restarted ? end.queries : end.queries - start.queries;
    hits += restarted ? end.hits : end.hits - start.hits;
  });
  return { ratio: queries > 0 ? hits / queries : Number.NaN, hits, queries };
}

/** How evenly the engines' batches were filled. */
export interface RunningBalance {
  /** Mean over samples of max/mean running across engines (1 = even, N = all on one); samples where nothing ran are skipped. NaN without such samples. */
  readonly maxOverMean: number;
  /** Mean running sequences per engine over all samples. */
  readonly meanRunning: number;
  /** Samples taken. */
  readonly samples: number;
}

/** Condenses running-count samples (one array of per-engine counts per sample). */
export function runningBalance(samples: readonly (readonly number[])[]): RunningBalance {
  let ratioSum = 0;
  let counted = 0;
  let total = 0;
  let cells = 0;
  for (const sample of samples) {
    let max = 0;
    let sum = 0;
    for (const running of sample) {
      max = Math.max(max, running);
      sum += running;
    }
    total += sum;
    cells += sample.length;
    if (sum === 0) continue;
    ratioSum += max / (sum / sample.length);
    counted++;
  }
  return { maxOverMean: counted === 0 ? Number.NaN : ratioSum / counted, meanRunning: cells === 0 ? 0 : total / cells, samples: samples.length };
}

/** Busy and total jiffies of one core (see systems.ts coreTimes). */
export interface CoreTimes {
  readonly busy: number;
  readonly total: number;
}

/** Busy share (0-1) of each core between two readings; NaN for a core without a reading or without elapsed time. */
export function coreBusy(before: readonly (CoreTimes | undefined)[], after: readonly (CoreTimes | undefined)[]): number[] {
  return after.map((end, i) => {
    const start = before[i];
    if (start === undefined || end === undefined || end.total <= start.total) return Number.NaN;
    return (end.busy - start.busy) / (end.total - start.total);
  });
}

/** What happened to one request of a row (times in ms after the row's start). */
export interface TurnRecord {
  /** When it was due: the conversation's arrival, or the previous reply's end plus the think time. */
  readonly dueMs: number;
  /** How late the client sent it. */
  readonly sendLagMs: number;
  /** Due time to first SSE data event; undefined when none came. */
  readonly ttftMs: number | undefined;
  /** When the response ended (or failed). */
  readonly endMs: number;
  readonly outcome: 'ok' | 'shed' | 'failed';
  /** For failed ones: what went wrong. */
  readonly error: string | undefined;
}

/** Served, shed and failed counts and TTFT quantiles over the records due inside [fromMs, toMs). */
export interface WindowSummary {
  readonly sent: number;
  readonly served: number;
  readonly shed: number;
  readonly failed: number;
  /** A few distinct failure descriptions with their counts. */
  readonly failures: Record<string, number>;
  /** TTFT of served requests (ms). */
  readonly ttftP50: number;
  readonly ttftP99: number;
  readonly sendLagP99: number;
  /** Requests that ended inside the window, per second (throughput, whenever they were sent). */
  readonly completedPerS: number;
}

/** Summarizes the records of the window [fromMs, toMs). */
export function summarizeWindow(records: readonly TurnRecord[], fromMs: number, toMs: number): WindowSummary {
  const inWindow = records.filter((r) => r.dueMs >= fromMs && r.dueMs < toMs);
  const ttft: number[] = [];
  const lag: number[] = [];
  const failures: Record<string, number> = {};
  let served = 0;
  let shed = 0;
  let failed = 0;
  for (const r of inWindow) {
    lag.push(r.sendLagMs);
    if (r.outcome === 'ok') {
      served++;
      if (r.ttftMs !== undefined) ttft.push(r.ttftMs);
    } else if (r.outcome === 'shed') shed++;
    else {
      failed++;
      const kind = (r.error ?? 'unknown').slice(0, 80);
      if (kind in failures || Object.keys(failures).length < 5) failures[kind] = (failures[kind] ?? 0) + 1;
    }
  }
  ttft.sort((a, b) => a - b);
  lag.sort((a, b) => a - b);
  const completed = records.filter((r) => r.outcome === 'ok' && r.endMs >= fromMs && r.endMs < toMs).length;
  return {
    sent: inWindow.length,
    served,
    shed,
    failed,
    failures,
    ttftP50: quantile(ttft, 0.5),
    ttftP99: quantile(ttft, 0.99),
    sendLagP99: quantile(lag, 0.99),
    completedPerS: toMs > fromMs ? (completed * 1000) / (toMs - fromMs) : Number.NaN,
  };
}

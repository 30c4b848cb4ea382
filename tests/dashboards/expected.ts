/**
 * What the panels should read, computed from the load generator's own
 * records over the same window Prometheus evaluates: its answer rate, its
 * share of 429s, and its latency quantiles, bucketed on the router's bucket
 * bounds and interpolated the way `histogram_quantile` does (so the check
 * measures the dashboard's aggregation, not the bucket resolution).
 */
import type { Outcome } from './load.ts';

/** Outcomes that ended in the window (endS - windowS, endS]. */
export function inWindow(outcomes: readonly Outcome[], endS: number, windowS: number): Outcome[] {
  return outcomes.filter((o) => o.doneAtS > endS - windowS && o.doneAtS <= endS);
}

/**
 * Prometheus' `histogram_quantile` over `values` counted into cumulative
 * buckets with upper bounds `bounds` (+Inf implied): linear interpolation
 * inside the bucket holding the rank, the first bucket starting at 0, and the
 * highest finite bound when the rank falls into +Inf.
 */
export function bucketQuantile(q: number, bounds: readonly number[], values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const counts = bounds.map((bound) => values.filter((v) => v <= bound).length);
  const rank = q * values.length;
  const b = counts.findIndex((count) => count >= rank);
  if (b === -1) return bounds.at(-1) as number;
  const lower = b === 0 ? 0 : (bounds[b - 1] as number);
  const below = b === 0 ? 0 : (counts[b - 1] as number);
  const inBucket = (counts[b] as number) - below;
  return lower + ((bounds[b] as number) - lower) * ((rank - below) / inBucket);
}

/** The exact `q` quantile of `values` (nearest rank), for the report. */
export function exactQuantile(q: number, values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

/** |actual - expected| / expected. */
export function relativeError(actual: number, expected: number): number {
  return Math.abs(actual - expected) / Math.abs(expected);
}

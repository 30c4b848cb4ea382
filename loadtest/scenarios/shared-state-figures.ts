/**
 * The arithmetic of the shared-state benchmark's verdicts, as small pure
 * functions: admitted rates, the median and spread of repeated runs, queue
 * balance across engines, comparisons "within x% of" a reference, and the
 * cost per request. Kept apart from the runs so every bar's arithmetic is
 * tested on its own.
 */

/** The median of repeated runs and the range they spread over. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

/** Median (mean of the middle two for an even count) and range of the finite values; NaNs when none are. */
export function spread(values: readonly number[]): Spread {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: values.length };
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, runs: values.length };
}

/** Requests per second admitted (answered 200) over a measured window of `windowMs`. */
export function admittedPerS(ok: number, windowMs: number): number {
  return windowMs <= 0 ? Number.NaN : (ok * 1000) / windowMs;
}

/**
 * Queue balance across engines from each engine's time-averaged waiting
 * queue: the largest over the mean, in [1, engines]. Engines that never
 * queued are perfectly balanced (1), not undefined: no queue anywhere is
 * the best a router can do.
 */
export function waitingImbalance(meanWaiting: readonly number[]): number {
  if (meanWaiting.length === 0) return Number.NaN;
  const mean = meanWaiting.reduce((a, b) => a + b, 0) / meanWaiting.length;
  return mean === 0 ? 1 : Math.max(...meanWaiting) / mean;
}

/** True when `value` is at most `(1 + share)` times `reference` (lower is better); false when either is not finite. */
export function atMostShareAbove(value: number, reference: number, share: number): boolean {
  return Number.isFinite(value) && Number.isFinite(reference) && value <= reference * (1 + share);
}

/**
 * True when two runs shed a share of their requests within `share` of each
 * other (relative to the reference run's share): `|a − b| ≤ share × b`.
 * Two runs that shed nothing agree.
 */
export function shedAgrees(run: { readonly shed: number; readonly measured: number }, reference: { readonly shed: number; readonly measured: number }, share: number): boolean {
  if (run.measured === 0 || reference.measured === 0) return false;
  const a = run.shed / run.measured;
  const b = reference.shed / reference.measured;
  return Math.abs(a - b) <= share * b;
}

/**
 * Two standard errors of the difference between two runs' 429 shares, taking
 * each run's 429 count as Poisson: the difference two runs show with nothing
 * changed between them. With a few dozen 429s a run it is far above 5%.
 */
export function shedNoise(run: { readonly shed: number; readonly measured: number }, reference: { readonly shed: number; readonly measured: number }): number {
  if (run.measured === 0 || reference.measured === 0) return Number.NaN;
  return 2 * Math.sqrt(run.shed / run.measured ** 2 + reference.shed / reference.measured ** 2);
}

/** Relative difference of `a` against `b` (e.g. +0.04 for 4% more); NaN when `b` is 0 or either is not finite. */
export function relativeTo(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b - 1 : Number.NaN;
}

/** An amount spent over a run (CPU ms, Redis commands) per request the routers handled; NaN without requests. */
export function perRequest(amount: number, requests: number): number {
  return requests > 0 && Number.isFinite(amount) ? amount / requests : Number.NaN;
}

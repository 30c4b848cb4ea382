/**
 * The PromQL building blocks every panel uses, so the rules that keep a
 * dashboard honest live in one place:
 *
 * - Counters and histograms are only ever read through `rate()`/`increase()`
 *   over `$__rate_interval`: a ratio of lifetime sums shows the average since
 *   the oldest replica started, not what is happening now.
 * - Router replicas each export their own view. Work a replica does (its
 *   requests, its in-flight count, its errors) is summed across replicas;
 *   what every replica observes about the same engine (scraped gauges,
 *   estimated waiting, load score, ejection) is taken with max/min by
 *   backend, since a sum would count each engine once per replica; so is
 *   what each replica reports about the same InferencePool, by pool.
 * - Engine numbers (`vllm:*`) come from Prometheus scraping the engines
 *   themselves, never from the router.
 */

/** Matchers on every router series: the dashboard's namespace, job and pod variables. */
export const ROUTER = 'namespace=~"$namespace", job=~"$job", pod=~"$pod"';

/** Matchers on every engine series: the engines' namespace and the model variable. */
export const ENGINE = 'namespace=~"$engine_namespace", model_name=~"$model"';

/** The model variable on router series that carry a `model` label. */
export const MODEL = 'model=~"$model"';

/** The pool variable on the InferencePool series (label `pool`, `namespace/name`). */
export const POOL = 'pool=~"$pool"';

/** `metric{matchers}`. */
export function series(metric: string, ...matchers: string[]): string {
  return `${metric}{${matchers.join(', ')}}`;
}

/** Per-second rate of a counter (or a histogram's `_bucket`/`_count`) over the panel's rate interval. */
export function rate(metric: string, ...matchers: string[]): string {
  return `rate(${series(metric, ...matchers)}[$__rate_interval])`;
}

/** `sum by (labels) (rate(...))`, or `sum(rate(...))` without labels. */
export function sumRate(by: readonly string[], metric: string, ...matchers: string[]): string {
  return `${sumBy(by)}(${rate(metric, ...matchers)})`;
}

/**
 * The `q` quantile of a histogram across every replica (and every label but
 * `le` and `by`): buckets are rated per series first, then summed, then
 * interpolated.
 */
export function quantile(q: number, histogram: string, by: readonly string[], ...matchers: string[]): string {
  return `histogram_quantile(${q}, ${sumBy(['le', ...by])}(${rate(`${histogram}_bucket`, ...matchers)}))`;
}

/** `sum by (a, b) ` or `sum `. */
export function sumBy(by: readonly string[]): string {
  return by.length === 0 ? 'sum ' : `sum by (${by.join(', ')}) `;
}

/**
 * A per-backend gauge every replica reports for the same engine, reduced
 * across replicas with `how` (never summed).
 */
export function perBackend(how: 'max' | 'min' | 'avg', metric: string, ...matchers: string[]): string {
  return `${how} by (backend) (${series(metric, ROUTER, ...matchers)})`;
}

/**
 * An `le` matcher for one bucket bound chosen by a variable. Prometheus 3
 * stores classic-histogram bounds as floats (`1` becomes `1.0`), 2.x as
 * exposed, so both spellings match.
 */
export function leMatcher(variable: string): string {
  return `le=~"\${${variable}}(\\\\.0)?"`;
}

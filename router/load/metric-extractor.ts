/**
 * The plugin point for engine metrics beyond the load gauges: a
 * {@link MetricExtractor} names the series it wants from each engine's
 * `/metrics`, is handed every sample of them during a scrape, and leaves its
 * result in the endpoint's attributes (endpoint-attributes.ts) under its own
 * key, for the scheduling plugins that read it. The idea is the Gateway API
 * Inference Extension's data layer (one data source that scrapes, extractors
 * that each take the families they want); the scan itself stays ours and as
 * cheap as before for bodies that carry no extractor's series.
 *
 * Adding one is a plugin file, its entry in the list the composition root
 * hands the scraper (router/compose/engine-watch.ts), and its test. The
 * scraper compiles every extractor's names into the scanner's lookup tables
 * once, when it is built.
 *
 * Staleness: an extractor's attribute is replaced by every successful scrape,
 * and cleared by one that carries none of its series, so a value never
 * outlives its series. A failed scrape (fetch error, unusable body) commits
 * nothing: the attribute keeps the last good scrape's value and goes stale
 * with the endpoint's load gauges. Readers that care judge its age the same
 * way, by the endpoint's scrape age.
 */
import type { AttributeKey, EndpointAttributes } from './endpoint-attributes.ts';

/**
 * The labels of one sample that its extractor asked for
 * ({@link MetricExtractor.labels}), unescaped; a label the line does not
 * carry is absent. A null-prototype record: `labels['constructor']` is
 * undefined unless the line carries it.
 */
export type SampleLabels = Readonly<Record<string, string>>;

/** What a commit may do to an endpoint's attributes: read the previous value (to count changes), replace or clear it. */
export type AttributeWriter = Pick<EndpointAttributes, 'get' | 'set' | 'delete'>;

/**
 * Reads some engine series into one per-endpoint attribute. Stateless and
 * shared by every endpoint: all per-scrape state lives in the
 * {@link MetricExtraction} that {@link begin} returns.
 */
export interface MetricExtractor {
  /** For logs and debugging, e.g. `vllm-lora-requests-info`. */
  readonly name: string;
  /**
   * Exact series names wanted, e.g. `vllm:lora_requests_info` (a histogram's
   * `_bucket` series is its own name). Valid Prometheus metric names, ASCII.
   * A name may also be a load gauge or another extractor's: each gets it.
   */
  readonly series: readonly string[];
  /** Label names whose values the extractor reads; the scanner parses no other label for it. */
  readonly labels: readonly string[];
  /** A fresh accumulator for one scrape of one endpoint. */
  begin(): MetricExtraction;
}

/** One extractor's work during one scrape of one endpoint. */
export interface MetricExtraction {
  /**
   * One sample of a wanted series, in body order. `value` is the sample's
   * value as the engine wrote it: it may be NaN or ±Inf. A malformed line of
   * a series only extractors want is skipped (never seen here) and does not
   * fail the scrape; see exposition-scanner.ts.
   */
  add(series: string, labels: SampleLabels, value: number): void;
  /**
   * Called once, after a successful scan only: writes the result under the
   * extractor's own key, or clears that key when the scrape carried none of
   * its series (see {@link commitAttribute}). Never throws.
   */
  commit(attributes: AttributeWriter): void;
}

/**
 * The commit rule in one place: stores `value` under `key`, or deletes the
 * key when `value` is undefined (this scrape had nothing for it), so a value
 * from an older scrape never lingers.
 */
export function commitAttribute<T>(attributes: AttributeWriter, key: AttributeKey<T>, value: T | undefined): void {
  if (value === undefined) attributes.delete(key);
  else attributes.set(key, value);
}

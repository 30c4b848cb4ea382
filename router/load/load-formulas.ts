/**
 * The two load quantities, kept apart on purpose (see docs/load-and-routing.md):
 *
 * - *Estimated waiting* decides saturation and shedding. It counts only work
 *   that cannot start: the engine's scraped queue, plus requests sent since
 *   that scrape that do not fit in the free capacity the scrape showed. An
 *   engine with room is never called saturated because the router has many
 *   requests open to it.
 * - *Load score* ranks endpoints. It is all outstanding work (waiting +
 *   running + sent since the scrape) over capacity, so endpoints of different
 *   sizes compare fairly.
 *
 * When the scrape is stale (or there is none yet) both fall back to the
 * router's own in-flight count.
 */

/** Inputs of the formulas for one endpoint. Counts are requests. */
export interface LoadInputs {
  /** Scraped gauges, or undefined when missing or stale. */
  readonly scraped: { readonly waiting: number; readonly running: number } | undefined;
  /** Requests sent after that scrape that are still open. */
  readonly sentSinceScrape: number;
  /** Requests the router has open to the endpoint. */
  readonly inFlight: number;
  /** Max concurrent sequences, when known (configured, annotated, or learned at saturation). */
  readonly capacity: number | undefined;
}

/**
 * Requests estimated to be queued at the engine (≥ 0).
 *
 * - fresh scrape, capacity C known: `waiting + max(0, sent − max(0, C − running))`
 * - fresh scrape, capacity unknown: `waiting + sent` when the scrape showed a
 *   queue (new requests join it), else `0` (no evidence of a queue)
 * - stale or no scrape: `max(0, inFlight − C)` when C is known, else `0`
 */
export function estimatedWaiting(input: LoadInputs): number {
  const { scraped, capacity } = input;
  if (scraped === undefined) return capacity === undefined ? 0 : Math.max(0, input.inFlight - capacity);
  if (capacity === undefined) return scraped.waiting > 0 ? scraped.waiting + input.sentSinceScrape : 0;
  const free = Math.max(0, capacity - scraped.running);
  return scraped.waiting + Math.max(0, input.sentSinceScrape - free);
}

/**
 * Outstanding work over capacity (≥ 0; 1 means "exactly full").
 *
 * - fresh scrape: `(waiting + running + sent) / C`
 * - stale or no scrape: `inFlight / C`
 *
 * where C is the known capacity, or `defaultCapacity` when unknown, so that
 * every endpoint's score is on the same scale.
 */
export function loadScore(input: LoadInputs, defaultCapacity: number): number {
  const capacity = input.capacity ?? defaultCapacity;
  const { scraped } = input;
  const outstanding = scraped === undefined ? input.inFlight : scraped.waiting + scraped.running + input.sentSinceScrape;
  return outstanding / Math.max(1, capacity);
}

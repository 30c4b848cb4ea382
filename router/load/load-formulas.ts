/**
 * The two load quantities, kept apart on purpose (see docs/load-and-routing.md):
 *
 * - *Estimated waiting* decides saturation and shedding. It counts only work
 *   that cannot start: outstanding work beyond what the engine can run. An
 *   engine with room is never called saturated because the router has many
 *   requests open to it.
 * - *Load score* ranks endpoints: all outstanding work over capacity, so
 *   endpoints of different sizes compare fairly.
 *
 * Outstanding work starts from the last scrape (waiting + running), minus
 * the requests the router saw finish since (they held slots the scrape
 * counted), plus the requests sent since. Between scrapes this tracks the
 * engine closely; without a fresh scrape it is the router's in-flight count.
 */

/** Inputs of the formulas for one endpoint. Counts are requests. */
export interface LoadInputs {
  /** Scraped gauges, or undefined when missing or stale. */
  readonly scraped: { readonly waiting: number; readonly running: number } | undefined;
  /** Requests sent after that scrape that are still open. */
  readonly sentSinceScrape: number;
  /**
   * Requests that were open at that scrape (so the engine counted them) and
   * have finished since: the slots they held are free again.
   */
  readonly doneSinceScrape: number;
  /** Requests the router has open to the endpoint. */
  readonly inFlight: number;
  /**
   * Requests the other router replicas have open to the endpoint, as last
   * read from the shared state (0 without Redis or while it is degraded).
   */
  readonly othersInFlight: number;
  /** {@link othersInFlight} when the scrape was taken: the engine counted those. */
  readonly othersAtScrape: number;
  /**
   * The other replicas' change in open requests since {@link othersInFlight}
   * was read, taken to mirror this replica's in a burst:
   * {@link mirroringOthers} × this replica's own change since that read.
   * Replicas behind one Service get the same burst in the same
   * milliseconds, and a fleet read is a publish interval old: without this,
   * each replica spends the engine's room alone until the next read shows
   * the others' sends. Under a configured bound it is at least what
   * mirroring from the read before gives (router/load/derived-load.ts).
   */
  readonly othersDrift?: number;
  /**
   * The other replicas {@link othersDrift} takes to mirror this one: their
   * number while shared state holds their counts and this replica is in a
   * burst the read has not shown (router/load/derived-load.ts `BURST_RISE`);
   * 0 otherwise.
   */
  readonly mirroringOthers?: number;
  /** Max concurrent sequences, when known (configured, annotated, or learned at saturation). */
  readonly capacity: number | undefined;
  /**
   * Other router replicas sending to the engine that this one cannot see
   * (`load.replicas` − 1 while no shared state holds their counts; 0
   * otherwise). Each is taken to mirror this replica: to have sent and
   * finished as many since the scrape, and to have as many open.
   */
  readonly unseenReplicas?: number;
}

/**
 * Work the engine holds now, as best the router can tell: with a fresh
 * scrape, `max(0, waiting + running − done + others' change) + sent`, and
 * never less than what the replicas have open; without one, the in-flight
 * count of this replica plus the others'.
 *
 * Without shared state but with the replica count known, the replicas this
 * one cannot see are taken to mirror it (see {@link LoadInputs.unseenReplicas}).
 *
 * The other replicas' change since the scrape is their in-flight count now
 * minus what it was at the scrape: positive when they sent more than they
 * saw finish (work the scrape did not count), negative when their requests
 * finished (slots the scrape counted that are free again). Their counts are
 * a publish interval or two old; without shared state it is 0.
 */
export function outstanding(input: LoadInputs): number {
  const { scraped } = input;
  // Replicas that cannot see each other each take their share of the engine's room, not all of it:
  // three replicas with capacity configured let 8-slot engines queue 25 against a bound of 5.
  const mirrors = 1 + (input.unseenReplicas ?? 0);
  const drift = input.othersDrift ?? 0;
  const inFlight = input.inFlight * mirrors + Math.max(0, input.othersInFlight + drift);
  if (scraped === undefined) return inFlight;
  // Never less than what the replicas have open: requests sent before the scrape that the engine had
  // not yet read (on the wire, in its accept backlog under a burst) are in neither the scrape nor the
  // sends since, and three replicas with capacity configured queued 7 against a bound of 5.
  return Math.max(inFlight, Math.max(0, scraped.waiting + scraped.running - input.doneSinceScrape * mirrors + input.othersInFlight + drift - input.othersAtScrape) + input.sentSinceScrape * mirrors);
}

/**
 * The number of requests the engine can run at once right now. When the
 * scrape showed a queue, the engine was full at what it was running (whether
 * it ran out of sequences or of KV-cache blocks), so that is the effective
 * capacity; otherwise the known capacity, if any.
 */
export function effectiveCapacity(input: LoadInputs): number | undefined {
  const { scraped, capacity } = input;
  if (scraped !== undefined && scraped.waiting > 0) return Math.min(capacity ?? scraped.running, scraped.running);
  return capacity;
}

/**
 * Requests estimated to be queued at the engine (≥ 0):
 * `max(0, outstanding − effective capacity)`, and `0` when the capacity is
 * unknown and nothing shows a queue (no evidence the engine is full).
 */
export function estimatedWaiting(input: LoadInputs, work = outstanding(input)): number {
  const capacity = effectiveCapacity(input);
  return capacity === undefined ? 0 : Math.max(0, work - capacity);
}

/**
 * Requests one more send of this replica adds to the engine's queue, as the
 * router models it (≥ 0; 0 when the capacity is unknown and nothing shows a
 * queue). The send counts once for this replica and once for each replica
 * taken to mirror it ({@link LoadInputs.unseenReplicas},
 * {@link LoadInputs.mirroringOthers}): replicas behind one Service get the
 * same burst at once, so where one replica sees room for one more, each of
 * them sends one. Counting the send once let three replicas each add to a
 * queue at its bound, and 8-slot engines queued 7-9 against a bound of 5.
 */
export function queuedBySend(input: LoadInputs, work = outstanding(input)): number {
  const capacity = effectiveCapacity(input);
  if (capacity === undefined) return 0;
  const weight = 1 + (input.unseenReplicas ?? 0) + (input.mirroringOthers ?? 0);
  return Math.max(0, work + weight - capacity) - Math.max(0, work - capacity);
}

/**
 * Outstanding work over capacity (≥ 0; 1 means "exactly full"), where the
 * capacity is the known one or `defaultCapacity` when unknown, so every
 * endpoint's score is on the same scale.
 */
export function loadScore(input: LoadInputs, defaultCapacity: number, work = outstanding(input)): number {
  return work / Math.max(1, input.capacity ?? defaultCapacity);
}

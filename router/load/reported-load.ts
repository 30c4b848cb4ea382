/**
 * What the router is told of one engine's load from outside: the engine's
 * own last scrape (with its age, and the capacity a queue in it revealed)
 * and the other replicas' in-flight counts from the shared state.
 *
 * The two belong together because the scrape counted the others' requests
 * too: the formulas subtract the others' count at the scrape from their
 * count now (load-formulas.ts), so the count at the scrape is marked when
 * the scrape arrives, and forgotten with the counts when the shared state
 * is lost. A stale scrape is kept (for display and the age metric), marked
 * stale, never dropped.
 */
import type { ModelGauges } from './exposition-scanner.ts';
import type { LoadClockAndSettings } from './load-clock.ts';

/** The engine's last successful scrape, summed over the models it serves. */
export interface ScrapedLoad {
  readonly waiting: number;
  readonly running: number;
  /** 0-1, or undefined when the engine does not export it. */
  readonly kvCacheUsage: number | undefined;
  /** Per model, as scraped. */
  readonly models: ReadonlyMap<string, ModelGauges>;
  /** Epoch ms of the scrape. */
  readonly at: number;
}

/** This replica's place among the router replicas sharing an engine evenly. */
export interface FleetShare {
  /** Router replicas sharing the engine, this one included: those queueing for it or holding requests there. */
  readonly replicas: number;
  /** This replica's seat at the engine, 0 to `replicas` − 1: the first `bound mod replicas` seats get one more. */
  readonly seat: number;
}

/** One endpoint's scrape marks and fleet counts; told of scrapes and shared-state reads by its endpoint state. */
export class ReportedLoad {
  #scraped: ScrapedLoad | undefined;
  #learnedCapacity: number | undefined;
  #othersInFlight = 0;
  #otherReplicas = 0;
  #ownAtFleetRead = 0;
  /** The read before the last (see {@link previousFleetRead}); undefined before the second read. */
  #previousRead: { readonly others: number; readonly own: number } | undefined;
  #othersAtScrape = 0;
  #fleetShare: FleetShare | undefined;
  /** The shared state holds the other replicas' counts for this endpoint (they are seen, not mirrored). */
  #fleetHeld = false;
  #version = 0;
  /** Epoch ms the endpoint joined the set. */
  readonly firstSeenAt: number;
  readonly #view: LoadClockAndSettings;

  /** `view` is read (never written) for the clock and the scrape max age. */
  constructor(view: LoadClockAndSettings) {
    this.#view = view;
    this.firstSeenAt = view.now;
  }

  /** Last successful scrape, if any (kept while stale, for display). */
  get scraped(): ScrapedLoad | undefined {
    return this.#scraped;
  }

  /** Highest `running` seen while the engine had a queue (here or, through the fleet, at another replica): it was full then. */
  get learnedCapacity(): number | undefined {
    return this.#learnedCapacity;
  }

  /** Requests the other router replicas have open to this endpoint, as last read from the shared state (0 without it). */
  get othersInFlight(): number {
    return this.#othersInFlight;
  }

  /** {@link othersInFlight} when the last scrape arrived: the engine counted those. */
  get othersAtScrape(): number {
    return this.#othersAtScrape;
  }

  /** The shared state holds the other replicas' counts (false: without Redis, or degraded). */
  get fleetHeld(): boolean {
    return this.#fleetHeld;
  }

  /** Bumped by every change to the values above, so derived values are recomputed. */
  get version(): number {
    return this.#version;
  }

  /** The last scrape is missing or older than the max age, at the view's clock. */
  get stale(): boolean {
    return this.#scraped === undefined || this.#view.now - this.#scraped.at > this.#view.maxScrapeAgeMs;
  }

  /** Not one successful scrape in longer than a scrape stays fresh since the endpoint joined. */
  get unscraped(): boolean {
    return this.#scraped === undefined && this.#view.now - this.firstSeenAt > this.#view.maxScrapeAgeMs;
  }

  /** Ms since the last successful scrape, or since joining while none has succeeded, at the view's clock. */
  get scrapeAgeMs(): number {
    return Math.max(0, this.#view.now - (this.#scraped?.at ?? this.firstSeenAt));
  }

  /** KV-cache usage 0-1 from a fresh scrape; 0 when unknown or stale. */
  get kvCacheUsage(): number {
    return this.stale ? 0 : (this.#scraped?.kvCacheUsage ?? 0);
  }

  /**
   * A scrape succeeded at `now` (epoch ms): gauges summed over the models
   * the engine serves, KV-cache usage as the highest; `queueWaitsElsewhere`:
   * its queue is no full batch's, so no capacity is learned from it. Returns
   * what it recorded.
   */
  scrapeArrived(models: ReadonlyMap<string, ModelGauges>, now: number, queueWaitsElsewhere = false): ScrapedLoad {
    let waiting = 0;
    let running = 0;
    let kv: number | undefined;
    for (const gauges of models.values()) {
      waiting += gauges.waiting;
      running += gauges.running;
      if (gauges.kvCacheUsage !== undefined) kv = Math.max(kv ?? 0, gauges.kvCacheUsage);
    }
    const scraped: ScrapedLoad = { waiting, running, kvCacheUsage: kv, models, at: now };
    this.#scraped = scraped;
    this.#othersAtScrape = this.#othersInFlight;
    // A queue means the engine was full: what was running then is its capacity. Unless it waits for
    // something else: requests waiting for a LoRA adapter slot taught 8-slot engines capacities of 2-4.
    if (waiting > 0 && !queueWaitsElsewhere && running > (this.#learnedCapacity ?? 0)) this.#learnedCapacity = running;
    this.#version++;
    return scraped;
  }

  /** Another replica learned a capacity; adopted when above this one's. Returns true when adopted. */
  adoptCapacity(capacity: number): boolean {
    if (capacity <= (this.#learnedCapacity ?? 0)) return false;
    this.#learnedCapacity = capacity;
    this.#version++;
    return true;
  }

  /** Other live replicas at the last fleet read (0 without one). */
  get otherReplicas(): number {
    return this.#otherReplicas;
  }

  /** This replica's seat in an even share of the endpoint, set at a fleet read that showed another replica queueing for it (EndpointView.fleetShare). */
  get fleetShare(): FleetShare | undefined {
    return this.#fleetShare;
  }

  /** This replica's own open requests to the endpoint when the fleet was last read. */
  get ownAtFleetRead(): number {
    return this.#ownAtFleetRead;
  }

  /**
   * The others' count and this replica's own at the fleet read before the
   * last. Each replica publishes on its own timer, so the last read holds
   * counts published up to a publish interval before it: the others' sends
   * in that interval are in neither the read nor the mirroring since it.
   */
  get previousFleetRead(): { readonly others: number; readonly own: number } | undefined {
    return this.#previousRead;
  }

  /**
   * The shared state says the `otherReplicas` other live replicas have
   * `count` requests open to this endpoint; this replica had `own` open then.
   * `share`: its seat in an even share of the endpoint, when another replica
   * queues for it (EndpointView.fleetShare); undefined otherwise.
   */
  fleetInFlight(count: number, otherReplicas: number, own: number, share: FleetShare | undefined): void {
    this.#fleetShare = share;
    this.#previousRead = this.#fleetHeld ? { others: this.#othersInFlight, own: this.#ownAtFleetRead } : undefined;
    this.#fleetHeld = true;
    this.#othersInFlight = count;
    this.#otherReplicas = otherReplicas;
    this.#ownAtFleetRead = own;
    this.#version++;
  }

  /** The shared counts are gone (Redis degraded): the scrape's share of them is forgotten too. */
  forgetFleet(): void {
    this.#fleetHeld = false;
    this.#othersInFlight = 0;
    this.#othersAtScrape = 0;
    this.#otherReplicas = 0;
    this.#ownAtFleetRead = 0;
    this.#previousRead = undefined;
    this.#fleetShare = undefined;
    this.#version++;
  }
}

/**
 * What the rest of the router reads of one endpoint's live state: who it
 * is, its load, and whether it may be routed to. Scheduling, admission and
 * metrics each declare the part they read as a `Pick` of this, so every
 * field's contract is written once, here; the load view's `EndpointState`
 * implements it. Nothing here changes state: only the load view tells an
 * endpoint's state what happened.
 *
 * Scheduling reads these per candidate per request: each is a field read or
 * a memoised value, never an allocation.
 */
import type { Endpoint } from '../../discovery/endpoint.ts';
import type { EndpointAttributes } from './endpoint-attributes.ts';
import type { FleetShare, ScrapedLoad } from './reported-load.ts';
import type { SafeStartPhase } from './safe-start.ts';

/** The read side of one endpoint's state (see the header). */
export interface EndpointView {
  /** The endpoint's id, unique in the set (also the `backend` metric label). */
  readonly id: string;
  /** 32-bit hash of `id`, for rendezvous hashing. */
  readonly idHash: number;
  /** The endpoint as its source last described it. */
  readonly endpoint: Endpoint;
  /** False once the endpoint has left the endpoint set; never true again (a return gets a new state). */
  readonly present: boolean;
  /**
   * Ready, not draining, present, and serves at least one known model (an
   * endpoint whose every claimed model its source's allow-list refused is
   * left with none). Ejection aside: see {@link ejected}.
   */
  readonly routable: boolean;
  /** Taken out of routing after repeated failures, at the view's clock. */
  readonly ejected: boolean;

  /** Requests this router has open to the endpoint right now (≥ 0). */
  readonly inFlight: number;
  /** Requests estimated to be queued at the engine (≥ 0); decides saturation (router/load/load-formulas.ts). */
  readonly estimatedWaiting: number;
  /**
   * Requests one more send of this replica would add to the engine's queue
   * (≥ 0): 0 while a batch slot is free (or the capacity is unknown and no
   * queue shows), more than 1 when replicas taken to mirror this one would
   * send alongside it (router/load/load-formulas.ts).
   */
  readonly queuedBySend: number;
  /** Outstanding work over capacity (≥ 0; 1 means exactly full); ranks endpoints, lower is better. */
  readonly loadScore: number;
  /** KV-cache usage 0-1 from a fresh scrape; 0 when unknown or stale. */
  readonly kvCacheUsage: number;
  /** Max concurrent sequences: from the source, else learned at saturation, else undefined (unknown). */
  readonly capacity: number | undefined;
  /**
   * Requests the engine may keep waiting in its own queue, when no fixed
   * `admission.maxWaiting` is set: what it drains (capacity over the mean
   * answer time) while the router refills a freed slot, so a queued request
   * waits there about that long whatever the engine's size. 0 until capacity
   * (configured or learned) and answer time are known, and 0 for any engine
   * that drains less than one request per refill (every chat engine but the
   * fastest): the router's own queue holds the rest.
   */
  readonly queueAllowance: number;
  /** Mean time (ms) from send to a successful answer's first byte from this replica, once one was seen: about what a request costs the engine before it answers (its prefill). */
  readonly firstByteMs: number | undefined;
  /**
   * Requests of this replica's per second the engine finishes at `now`
   * (epoch ms), as best known: what it finished lately, or the requests open
   * to it over the mean answer time (Little's law) when that is more. The
   * first lags an engine that is filling up (after a start, a quiet spell,
   * or while the safe start grows); the second follows it at once, counts
   * only this replica's share of an engine others also use, and takes the
   * engine's own queue in its stride (queued requests are open, and their
   * answers take longer). With the replica count known (the shared state's
   * live replicas, else `load.replicasFromService` or `load.replicas`), at
   * least this replica's even share of a full engine's drain (capacity over
   * the mean answer time), which the queue gate needs when every engine is
   * full: what one replica finished lately swings with the turns replicas
   * happen to get.
   */
  drainRate(now: number): number;

  /**
   * Requests this replica may have open to the endpoint before it counts as
   * saturated: the safe-start limit while no capacity is configured (the
   * configured capacity wins), else undefined (no limit).
   */
  readonly concurrencyLimit: number | undefined;
  /**
   * Requests this replica may have open to the endpoint for work that
   * belongs there, above the safe-start limit (see SafeStartLimit.burstBound);
   * undefined when capacity is configured or the safe start is off or has
   * handed over.
   */
  readonly burstBound: number | undefined;
  /**
   * This replica's seat in an even share of the engine while it is full: set
   * when the shared state says another replica has requests waiting in its
   * router queue for a model the engine serves; undefined otherwise. Each
   * replica refills the slots its own requests free, so without it a
   * replica that fell behind at a full engine stayed behind, and the
   * requests its clients kept sending (a load balancer in front deals them
   * out evenly) piled up in its queue until it shed them: one of three
   * replicas shed a tenth of a burst the others served whole
   * (router/scheduling/saturation.ts `evenShare`).
   */
  readonly fleetShare: FleetShare | undefined;
  /** Where the safe-start limit is while it is in force (no configured capacity); undefined otherwise. */
  readonly safeStartPhase: SafeStartPhase | undefined;

  /** Last successful scrape, if any (kept while stale, for display). */
  readonly scraped: ScrapedLoad | undefined;
  /** The last scrape is missing or older than the max age: routing uses in-flight counts. */
  readonly stale: boolean;
  /**
   * Milliseconds since the last successful scrape, or since the endpoint
   * joined while none has succeeded yet (so an engine that was never
   * scraped ages too), at the view's clock. Exported as a metric: alerts
   * read it, routing reads {@link stale}.
   */
  readonly scrapeAgeMs: number;

  /** Scheduling plugins' own per-endpoint data (see endpoint-attributes.ts). */
  readonly attributes: EndpointAttributes;
}

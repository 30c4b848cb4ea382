/**
 * The saturation test: when an endpoint should take no more work. Saturation uses *estimated
 * waiting* (queued work), never the in-flight count alone: an engine with
 * free batch slots is not saturated however many requests the router has
 * open to it (see router/load/load-formulas.ts). The exceptions are limits
 * on in-flight requests that stand for capacity: the configured per-endpoint
 * cap, and the safe start of an engine whose capacity is unknown
 * (router/load/safe-start.ts). The scheduler binds the test for each
 * priority; the saturation filter (filters/saturation.ts) applies it to a
 * pool, and pickers read it through their PickContext.
 */
import type { FleetShare } from '../load/reported-load.ts';
import { PRIORITY_LIMITS, type Priority } from './priority.ts';

/** Saturation thresholds. */
export interface SaturationThresholds {
  /** Estimated waiting requests at which an endpoint is saturated; undefined: each endpoint's own queue allowance (the adaptive default). */
  readonly maxWaiting?: number | undefined;
  /** KV-cache usage (0-1) at which an endpoint is saturated. */
  readonly kvCacheThreshold: number;
  /** Router in-flight requests to one endpoint at which it is saturated (0: off). */
  readonly maxInFlightPerEndpoint: number;
}

/** The load an endpoint shows to the saturation test. */
export interface SaturationInputs {
  readonly estimatedWaiting: number;
  /** Requests one more send would add to the engine's queue (0: a batch slot is free). */
  readonly queuedBySend: number;
  readonly kvCacheUsage: number;
  readonly inFlight: number;
  /** Requests this router may have open to the endpoint (the safe start for unknown capacity); undefined: no such limit. */
  readonly concurrencyLimit?: number | undefined;
  /**
   * Requests this router may have open to the endpoint for work that belongs
   * there (a session's, prefix group's or pinned response's engine), however
   * the safe start limits new work: what the engine was seen running without
   * a queue plus its queue budget (router/load/safe-start.ts); undefined: no
   * such bound (capacity configured or learned, or the safe start off).
   */
  readonly burstBound?: number | undefined;
  /** Requests the engine may keep waiting, bounded in time (router/load/endpoint-view.ts); used when no fixed maxWaiting is set. */
  readonly queueAllowance: number;
  /** Mean time (ms) to the engine's first byte from this replica, once seen; bounds the wait for its next free slot. */
  readonly firstByteMs?: number | undefined;
  /** Requests the other replicas have open to the endpoint, as last read from the shared state (0 or absent without it). */
  readonly othersInFlight?: number | undefined;
  /** Max concurrent sequences, when known (configured or learned). */
  readonly capacity?: number | undefined;
  /** This replica's place in an even share of the engine (router/load/endpoint-view.ts); undefined: nobody else waits for it. */
  readonly fleetShare?: FleetShare | undefined;
}

/**
 * The requests of a bound (capacity plus the waiting allowed) that the
 * replica in `share.seat` may hold: `bound / replicas`, rounded down, plus
 * one for the first `bound mod replicas` seats, so the shares add up to the
 * bound; at least 1. Rounded up for everyone (5 of an engine's 13 for each
 * of three), two replicas could hold 5 and leave the third 3, and one of
 * three still shed a tenth of `bench cold-start`'s burst in 2 of 3 runs.
 */
export function evenShare(bound: number, share: FleetShare): number {
  const base = Math.floor(bound / share.replicas);
  return Math.max(1, base + (share.seat < bound % share.replicas ? 1 : 0));
}

/**
 * True when `endpoint` is saturated for a request of `priority`: when
 * sending it one more request would make its estimated queue longer than
 * `maxWaiting`, or by default the endpoint's queue allowance (so 0 admits
 * only into free batch slots); when this replica holds its safe-start limit
 * there, or its even share while another replica queues for the engine.
 * Low priority sees only part of the waiting budget, so it is turned away
 * before normal and high-priority work is.
 */
export function isSaturated(endpoint: SaturationInputs, thresholds: SaturationThresholds, priority: Priority = 'normal'): boolean {
  return failsFilter(endpoint, thresholds, priority) || (endpoint.concurrencyLimit !== undefined && endpoint.inFlight >= endpoint.concurrencyLimit) || overEvenShare(endpoint, thresholds);
}

/**
 * This replica holds its even share of the engine's bound (capacity plus
 * the waiting it allows) while another replica has requests waiting for the
 * engine: it leaves the slots its own requests free to that replica. Like
 * the safe-start limit, a limit on where new work goes: a request that
 * belongs to the engine keeps it ({@link homeRoom}).
 */
function overEvenShare(endpoint: SaturationInputs, thresholds: SaturationThresholds): boolean {
  const { fleetShare, capacity } = endpoint;
  if (fleetShare === undefined || capacity === undefined) return false;
  return endpoint.inFlight >= evenShare(capacity + (thresholds.maxWaiting ?? endpoint.queueAllowance), fleetShare);
}

/**
 * What a request's own engine (its session's, prefix group's or pinned
 * response's) can do for it: `keep` it, have it `wait` in the router queue
 * for that engine, or let it `move` elsewhere.
 */
export type HomeRoom = 'keep' | 'wait' | 'move';

/**
 * {@link HomeRoom} of `endpoint` for a request that belongs there. Moving a
 * conversation costs its KV cache, so it moves only when the engine really
 * cannot take it: a queue beyond its bound, KV cache at the threshold, the
 * configured per-endpoint cap. A batch that is merely full (every slot
 * busy, nothing waiting) frees a slot soon, so the request waits for it
 * (bounded by {@link homeWaitMs}). The safe start limits where *new* work
 * goes, not this: up to the burst bound the engine keeps the request, and at
 * the bound the request waits for its engine instead of moving: were the
 * safe-start limit saturation, every cold replica would move sessions off
 * idle engines.
 */
export function homeRoom(endpoint: SaturationInputs, thresholds: SaturationThresholds, priority: Priority = 'normal'): HomeRoom {
  if (failsFilter(endpoint, thresholds, priority)) return merelyFull(endpoint, thresholds, priority) ? 'wait' : 'move';
  return endpoint.burstBound !== undefined && endpoint.inFlight >= endpoint.burstBound ? 'wait' : 'keep';
}

/**
 * How long (ms) a request may wait in the router queue for its own engine
 * (`homeRoom` said `wait`) before it goes where new work goes. At a full
 * batch with no queue: about what the move would cost, the engine's mean
 * time to first byte (its prefill of the request; a moved conversation pays
 * at least that elsewhere), so a slot that frees within it keeps the cache
 * and one that does not costs the request no more than the move would,
 * plus `fleetLagMs` when other replicas hold slots there: a slot they free
 * shows here only at a later fleet read. At the safe start's burst bound,
 * `boundWaitMs`: that bound rises at scrapes that show room. Never more
 * than `boundWaitMs`.
 */
export function homeWaitMs(endpoint: Pick<SaturationInputs, 'queuedBySend' | 'burstBound' | 'firstByteMs' | 'othersInFlight'>, boundWaitMs: number, fleetLagMs = 0): number {
  if (endpoint.burstBound !== undefined || endpoint.queuedBySend === 0) return boundWaitMs;
  return Math.min(boundWaitMs, (endpoint.firstByteMs ?? 0) + ((endpoint.othersInFlight ?? 0) > 0 ? fleetLagMs : 0));
}

/** Fails the saturation filter only because the batch is full: no queue shows, KV cache and the per-endpoint cap allow one more. */
function merelyFull(endpoint: SaturationInputs, thresholds: SaturationThresholds, priority: Priority): boolean {
  return endpoint.queuedBySend > 0 && endpoint.estimatedWaiting === 0 && !failsFilter(endpoint, thresholds, priority, 0);
}

/**
 * Saturated by what the engine shows (queue, KV cache) or the configured
 * per-endpoint cap: no request should be added. `queuedBySend` is what the
 * send adds to the queue (the endpoint's own figure unless a caller asks
 * whether the engine would pass without it).
 */
function failsFilter(endpoint: SaturationInputs, thresholds: SaturationThresholds, priority: Priority, queuedBySend = endpoint.queuedBySend): boolean {
  const maxWaiting = (thresholds.maxWaiting ?? endpoint.queueAllowance) * PRIORITY_LIMITS[priority].waiting;
  const waitingAfter = endpoint.estimatedWaiting + queuedBySend;
  return (
    waitingAfter > maxWaiting ||
    endpoint.kvCacheUsage >= thresholds.kvCacheThreshold ||
    (thresholds.maxInFlightPerEndpoint > 0 && endpoint.inFlight >= thresholds.maxInFlightPerEndpoint)
  );
}

/**
 * When an endpoint should take no more work. Saturation uses *estimated
 * waiting* (queued work), never the in-flight count alone: an engine with
 * free batch slots is not saturated however many requests the router has
 * open to it (see router/load/load-formulas.ts).
 */
import { PRIORITY_LIMITS, type Priority } from './priority.ts';

/** Saturation thresholds. */
export interface SaturationThresholds {
  /** Estimated waiting requests at which an endpoint is saturated. */
  readonly maxWaiting: number;
  /** KV-cache usage (0-1) at which an endpoint is saturated. */
  readonly kvCacheThreshold: number;
  /** Router in-flight requests to one endpoint at which it is saturated (0: off). */
  readonly maxInFlightPerEndpoint: number;
}

/** The load an endpoint shows to the saturation test. */
export interface SaturationInputs {
  readonly estimatedWaiting: number;
  readonly kvCacheUsage: number;
  readonly inFlight: number;
}

/**
 * True when `endpoint` is saturated for a request of `priority`: low
 * priority sees only part of the waiting budget, so it is turned away
 * before normal and high-priority work is.
 */
export function isSaturated(endpoint: SaturationInputs, thresholds: SaturationThresholds, priority: Priority = 'normal'): boolean {
  const maxWaiting = Math.max(1, thresholds.maxWaiting * PRIORITY_LIMITS[priority].waiting);
  return (
    endpoint.estimatedWaiting >= maxWaiting ||
    endpoint.kvCacheUsage >= thresholds.kvCacheThreshold ||
    (thresholds.maxInFlightPerEndpoint > 0 && endpoint.inFlight >= thresholds.maxInFlightPerEndpoint)
  );
}

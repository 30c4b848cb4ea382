/**
 * The Retry-After of a shed request, from how fast the fleet drains: the
 * work beyond what the candidates can queue, divided by how many requests
 * per second they finish. OpenAI SDKs honour it, so a good estimate spreads
 * retries instead of bunching them.
 */
import type { EndpointView } from '../load/endpoint-view.ts';

/** One candidate's backlog and drain rate (contracts on {@link EndpointView}). */
export type DrainInputs = Pick<EndpointView, 'estimatedWaiting' | 'queueAllowance' | 'drainRate'>;

/** Bounds of the answer (s). */
const MIN_S = 1;
const MAX_S = 60;
/** When nothing has finished lately, there is no rate to divide by. */
const UNKNOWN_RATE_S = 2;

/** Whole seconds to wait, 1-60. `queued` is the router's own wait-queue length; `maxWaiting` undefined: each candidate's allowance. */
export function retryAfterSeconds(candidates: readonly DrainInputs[], maxWaiting: number | undefined, queued: number, now: number): number {
  let excess = queued;
  let rate = 0;
  for (const candidate of candidates) {
    excess += Math.max(0, candidate.estimatedWaiting - (maxWaiting ?? candidate.queueAllowance) + 1);
    rate += candidate.drainRate(now);
  }
  if (rate <= 0) return UNKNOWN_RATE_S;
  return wholeRetrySeconds(excess / rate);
}

/** A wait of `seconds` as a Retry-After: whole seconds, 1-60. */
export function wholeRetrySeconds(seconds: number): number {
  return Math.min(MAX_S, Math.max(MIN_S, Math.ceil(seconds)));
}

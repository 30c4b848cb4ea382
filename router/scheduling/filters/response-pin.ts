/**
 * Filter: a Responses API request that names a `previous_response_id` must
 * reach the engine that stored that response, since no other engine can
 * continue it. This is correctness, not preference: when the pinned engine
 * is a candidate it is the only one left, and if it is saturated the request
 * queues or is shed rather than sent elsewhere. When the engine is no longer
 * a candidate (it left, or the id is unknown to this replica) the filter
 * keeps everyone and the engine that gets it answers for the unknown id.
 */
import type { Candidate } from '../candidate.ts';

/**
 * Compacts `pool[0..n)` to the candidate whose id is `pinned`, when it is
 * there; returns the new count (1, or `n` unchanged).
 */
export function keepPinned(candidates: readonly Candidate[], pinned: string | undefined, pool: Uint32Array, n: number): number {
  if (pinned === undefined) return n;
  for (let i = 0; i < n; i++) {
    const index = pool[i] as number;
    if ((candidates[index] as Candidate).id === pinned) {
      pool[0] = index;
      return 1;
    }
  }
  return n;
}

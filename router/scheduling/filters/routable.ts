/**
 * Filter: drop ejected candidates. The load view's per-model index already
 * holds only endpoints that are ready, not draining and serve the model (the
 * model and adapter match: engines list their LoRA adapters as models), so
 * ejection is what is left to check. When every candidate is ejected they
 * all stay: routing to a suspect endpoint beats refusing everything.
 */
import type { Candidate } from '../candidate.ts';

/**
 * Writes into `pool` the indices of the candidates that are not ejected, in
 * order (all of them when every one is ejected); returns how many. One pass:
 * this runs over every candidate of every request.
 */
export function keepRoutable(candidates: readonly Candidate[], pool: Uint32Array): number {
  const total = candidates.length;
  let kept = 0;
  for (let i = 0; i < total; i++) if (!(candidates[i] as Candidate).ejected) pool[kept++] = i;
  if (kept > 0) return kept;
  for (let i = 0; i < total; i++) pool[i] = i;
  return total;
}

/**
 * Filter: a profile's own filters (plugins, see ../pick.ts CandidateFilter),
 * run in order after the built-in ones. Each narrows the pool to the
 * candidates it keeps; one that would keep none is passed over, so a filter
 * can prefer but never refuse.
 */
import type { Candidate, RequestFacts } from '../candidate.ts';
import type { CandidateFilter } from '../pick.ts';

/**
 * Compacts `pool[0..n)` through each of `filters` in turn, using `scratch`
 * (at least `n` long) so a filter that keeps nobody leaves the pool as it
 * was; returns the new count.
 */
export function keepPassing(filters: readonly CandidateFilter[], facts: RequestFacts, candidates: readonly Candidate[], pool: Uint32Array, n: number, scratch: Uint32Array): number {
  let count = n;
  for (const filter of filters) {
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const index = pool[i] as number;
      if (filter.keeps(facts, candidates[index] as Candidate)) scratch[kept++] = index;
    }
    if (kept === 0 || kept === count) continue;
    pool.set(scratch.subarray(0, kept));
    count = kept;
  }
  return count;
}

/** The first of `filters` that does not keep `candidate` for the request, if any. */
export function refusingFilter(filters: readonly CandidateFilter[], facts: RequestFacts, candidate: Candidate): CandidateFilter | undefined {
  return filters.find((filter) => !filter.keeps(facts, candidate));
}

/** Candidates and decision contexts for the scheduling unit tests. */
import { EndpointAttributes } from '../../router/load/endpoint-attributes.ts';
import { hashString } from '../../router/load/hash.ts';
import type { Candidate, PrefixFacts, RequestFacts } from '../../router/scheduling/candidate.ts';
import type { PickContext } from '../../router/scheduling/pick.ts';

/** A test candidate: plain data with the fields scheduling reads. */
export interface FakeCandidate extends Candidate {
  estimatedWaiting: number;
  queueAllowance: number;
}

/** A candidate named `id` with load score `loadScore`, idle otherwise. */
export function ep(id: string, loadScore = 0, extra: Partial<FakeCandidate> = {}): FakeCandidate {
  return { id, idHash: hashString(id), inFlight: 0, loadScore, kvCacheUsage: 0, ejected: false, estimatedWaiting: 0, queueAllowance: 0, queuedBySend: 0, attributes: new EndpointAttributes(), ...extra };
}

/** `n` idle candidates pod-0..pod-(n-1). */
export function fleet(n: number, prefix = 'pod'): FakeCandidate[] {
  return Array.from({ length: n }, (_, i) => ep(`${prefix}-${i}`));
}

/** Request facts for model `m`. */
export function facts(extra: Partial<RequestFacts> = {}): RequestFacts {
  return { model: 'm', stream: false, sessionKey: undefined, bodyBytes: 1, ...extra };
}

/** Prefix facts for a conversation and group, with a share and credits. */
export function prefixFacts(conversation: number, group: number, extra: Partial<Omit<PrefixFacts, 'keys'>> & { historyTokens?: number; openingTokens?: number; blockCount?: number } = {}): PrefixFacts {
  return {
    keys: { conversation, group, historyTokens: extra.historyTokens ?? 0, openingTokens: extra.openingTokens ?? 0, blockCount: extra.blockCount ?? 0, blocks: new Uint32Array(0) },
    share: extra.share ?? 0,
    sharedPrefixTokens: extra.sharedPrefixTokens ?? 0,
    reuse: extra.reuse ?? 1,
    placedOn: extra.placedOn,
  };
}

/** A decision context over every candidate, as the profile builds it. */
export function contextOf<T extends Candidate>(candidates: readonly T[], requestFacts: RequestFacts = facts()): PickContext<T> {
  const pool = Uint32Array.from(candidates.keys());
  const meanLoad = candidates.reduce((sum, c) => sum + c.loadScore, 0) / Math.max(1, candidates.length);
  return { facts: requestFacts, candidates, pool, n: candidates.length, meanLoad, saturated: () => false, homeRoom: () => 'keep' };
}

/** A deterministic Random (Park-Miller). */
export function seeded(seed = 1): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 48271) >>> 0) % 2147483647;
    return state / 2147483647;
  };
}

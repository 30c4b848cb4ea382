/**
 * Scorer: session rendezvous (highest-random-weight) hashing. Every replica
 * ranks the endpoints for a session key the same way with no shared state,
 * and when an endpoint joins or leaves only the keys whose top choice it is
 * (about 1/N) move. Applies only to requests with a session key.
 */
import { z } from 'zod';
import { hashString, mix32 } from '../../load/hash.ts';
import type { Candidate, RequestFacts } from '../candidate.ts';
import { BALANCE_FLOOR } from '../load-bound.ts';
import type { OrderingScorer, PickContext } from '../pick.ts';
import type { AffinityPlugin } from '../plugin.ts';
import { ensureUint32, topKInto } from '../select.ts';

export class SessionRendezvousScorer implements OrderingScorer {
  readonly name = 'session';
  readonly outcomes = { hit: 'affinity_hit', spill: 'affinity_spill', declined: 'no_key_fallback' } as const;
  /** Rendezvous weights by pool position, reused across decisions. */
  #weight = new Uint32Array(0);

  applies(facts: RequestFacts): boolean {
    return facts.sessionKey !== undefined;
  }

  order<T extends Candidate>(context: PickContext<T>, max: number, order: Uint32Array, credit: Float64Array): number {
    const { candidates, pool, n } = context;
    const key = hashString(context.facts.sessionKey ?? '');
    const weight = (this.#weight = ensureUint32(this.#weight, n));
    for (let i = 0; i < n; i++) weight[i] = mix32(key, (candidates[pool[i] as number] as T).idHash);
    const count = topKInto(order, n, max, (i, j) =>
      weight[i] !== weight[j] ? (weight[i] as number) > (weight[j] as number) : (candidates[pool[i] as number] as T).id < (candidates[pool[j] as number] as T).id,
    );
    credit.fill(0, 0, count);
    return count;
  }
}

const sessionParameters = z.strictObject({
  epsilon: z.number().min(0).optional().describe('Load bound headroom over the mean load score (default: routing.balanceEpsilon).'),
});

/** `session`: a walk of the session key's rendezvous order; a conversation stays home up to (1 + epsilon) x the mean load, never below the balance floor. */
export const sessionAffinityPlugin: AffinityPlugin<z.output<typeof sessionParameters>> = {
  name: 'session',
  description: "Requests with a session key: the key's rendezvous order, so every replica sends a conversation to the same engine while it stays under the load bound.",
  parameters: sessionParameters,
  create: (parameters, defaults) => ({
    scorer: new SessionRendezvousScorer(),
    bound: { epsilon: parameters.epsilon ?? defaults.balanceEpsilon, kappa: 0, floor: BALANCE_FLOOR },
  }),
};

import type { EndpointLoad, Random, RequestFacts, RoutingPolicy } from './policy.ts';

/**
 * Orders candidates by the router's own in-flight count, lowest first, with
 * ties broken at random so equal endpoints share the load evenly.
 */
export class LeastInFlightPolicy implements RoutingPolicy {
  readonly name = 'least-in-flight';
  readonly #random: Random;

  constructor(random: Random) {
    this.#random = random;
  }

  order<T extends EndpointLoad>(_facts: RequestFacts, candidates: readonly T[]): T[] {
    const shuffled = candidates.slice();
    // Fisher-Yates, then a stable sort: equal counts keep their random order.
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(this.#random() * (i + 1));
      const tmp = shuffled[i] as T;
      shuffled[i] = shuffled[j] as T;
      shuffled[j] = tmp;
    }
    return shuffled.sort((a, b) => a.inFlight - b.inFlight);
  }
}

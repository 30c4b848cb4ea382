import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_ORDERED } from '../candidate.ts';
import { contextOf, ep, facts, fleet, prefixFacts } from '../../../tests/kit/scheduling-fixtures.ts';
import { kvUsageScorer } from './kv-usage.ts';
import { loadScoreScorer } from './load-score.ts';
import { PrefixAffinityScorer } from './prefix-affinity.ts';
import { SessionRendezvousScorer } from './session-rendezvous.ts';

const order = new Uint32Array(MAX_ORDERED);
const credit = new Float64Array(MAX_ORDERED);

describe('rating scorers', () => {
  it('rate lower load and lower KV usage higher, within [0, 1]', () => {
    const candidates = [ep('a', 0), ep('b', 1), ep('c', 7, { kvCacheUsage: 0.9 })];
    const out = new Float64Array(3);
    loadScoreScorer.rate(contextOf(candidates), out);
    assert.deepEqual([...out], [1, 0.5, 0.125]);
    kvUsageScorer.rate(contextOf(candidates), out);
    assert.ok(Math.abs((out[2] as number) - 0.1) < 1e-9 && out[0] === 1);
  });
});

describe('session rendezvous scorer', () => {
  const scorer = new SessionRendezvousScorer();
  const first = (candidates: ReturnType<typeof fleet>, key: string) => {
    const context = contextOf(candidates, facts({ sessionKey: key }));
    scorer.order(context, MAX_ORDERED, order, credit);
    return candidates[order[0] as number]?.id;
  };

  it('applies only to requests with a session key', () => {
    assert.equal(scorer.applies(facts()), false);
    assert.equal(scorer.applies(facts({ sessionKey: 'k' })), true);
  });
  it('orders a key the same way whatever the candidate order', () => {
    const pods = fleet(8);
    assert.equal(first(pods, 'user-42'), first([...pods].reverse(), 'user-42'));
  });
  it('spreads keys evenly', () => {
    const pods = fleet(4);
    const counts = new Map<string, number>();
    for (let i = 0; i < 8000; i++) counts.set(first(pods, `k${i}`) ?? '', (counts.get(first(pods, `k${i}`) ?? '') ?? 0) + 1);
    for (const count of counts.values()) assert.ok(count > 1700 && count < 2300, [...counts.values()].join(','));
  });
  it('moves at most 1/N + 2% of keys when one of N endpoints is added (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), fc.string({ minLength: 1, maxLength: 8 }), (n, salt) => {
        const before = fleet(n);
        const after = [...before, ep(`pod-new-${salt}`)];
        let moved = 0;
        for (let i = 0; i < 2000; i++) if (first(before, `${salt}-${i}`) !== first(after, `${salt}-${i}`)) moved++;
        assert.ok(moved / 2000 <= 1 / n + 0.02, `${moved} moved with N=${n}`);
      }),
      { numRuns: 30 },
    );
  });
});

describe('prefix affinity scorer', () => {
  const scorer = new PrefixAffinityScorer();
  const place = (candidates: ReturnType<typeof fleet>, conversation: number, group: number, share = 0, historyTokens = 0) => {
    const context = contextOf(candidates, facts({ prefix: prefixFacts(conversation, group, { share, historyTokens }) }));
    const count = scorer.order(context, MAX_ORDERED, order, credit);
    return { ids: [...order.subarray(0, count)].map((i) => candidates[i]?.id), credit: [...credit.subarray(0, count)] };
  };

  it('declines without prefix facts, and for a new prompt without history when the traffic shows no reuse', () => {
    assert.equal(scorer.applies(facts()), false);
    assert.equal(scorer.applies(facts({ prefix: prefixFacts(1, 2, { reuse: 0.01 }) })), false);
    assert.equal(scorer.applies(facts({ prefix: prefixFacts(1, 2, { reuse: 0.5 }) })), true);
    // A known group, or history, may be cached at home whatever the traffic as a whole shows.
    assert.equal(scorer.applies(facts({ prefix: prefixFacts(1, 2, { reuse: 0.01, share: 0.01 }) })), true);
    assert.equal(scorer.applies(facts({ prefix: prefixFacts(1, 2, { reuse: 0.01, historyTokens: 100 }) })), true);
    // So may a group another replica placed (shared placements, Redis).
    assert.equal(scorer.applies(facts({ prefix: { ...prefixFacts(1, 2, { reuse: 0.01 }), placedOn: 12345 } })), true);
    // And a new group whose whole 8 KiB span is an opening before the user's message (a document, instructions):
    // presumed shared, whatever the reuse. A shorter opening is left to the reuse estimate.
    assert.equal(scorer.applies(facts({ prefix: prefixFacts(1, 2, { reuse: 0, openingTokens: 2_048 }) })), true);
    assert.equal(scorer.applies(facts({ prefix: prefixFacts(1, 2, { reuse: 0, openingTokens: 2_047 }) })), false);
    // Unless the fleet's shared placements (Redis) have none for it: its first placement by load is shared.
    assert.equal(scorer.applies(facts({ prefix: { ...prefixFacts(1, 2, { reuse: 0, openingTokens: 2_048 }), fleetPlacement: null } })), false);
    const opening = contextOf(fleet(8), facts({ prefix: prefixFacts(1, 2, { reuse: 0, openingTokens: 6_000, blockCount: 64 }) }));
    assert.equal(scorer.order(opening, MAX_ORDERED, order, credit), MAX_ORDERED);
  });
  it('returns a permutation of distinct candidates, at most MAX_ORDERED (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 120 }), fc.integer(), fc.integer(), fc.double({ min: 0, max: 1, noNaN: true }), (n, c, g, share) => {
        const { ids } = place(fleet(n), c >>> 0, g >>> 0, share);
        // A group every engine serves, without history, is left to least load.
        assert.equal(ids.length, Math.max(1, Math.ceil(2 * n * share)) >= n ? 0 : Math.min(n, MAX_ORDERED));
        assert.equal(new Set(ids).size, ids.length);
      }),
      { numRuns: 200 },
    );
  });
  it('sends a rare group to one home, and a conversation home whatever the candidate order', () => {
    const pods = fleet(8);
    const home = place(pods, 11, 22).ids[0];
    assert.equal(place([...pods].reverse(), 11, 22).ids[0], home);
    // Another conversation of the same rare group shares the home (the group's first tier is one engine).
    assert.equal(place(pods, 12, 22).ids[0], home);
  });
  it("credits a rare group's home with its span when this replica placed it nowhere (every replica sends it there first)", () => {
    const pods = fleet(8);
    const credited = (share: number, blockCount: number) => {
      scorer.order(contextOf(pods, facts({ prefix: prefixFacts(11, 22, { share, blockCount }) })), MAX_ORDERED, order, credit);
      return [credit[0], credit[1]];
    };
    // 20 blocks of 512 bytes: the group hash covers its first 8 KiB, 2,048 tokens, a quarter of full credit.
    assert.deepEqual(credited(0, 20), [0.25, 0]);
    assert.deepEqual(credited(0, 4), [0.0625, 0], 'a shorter prompt: its own span');
    // A group spread over several engines is presumed nowhere: its tier gets only the prefix its requests were seen to share.
    assert.deepEqual(credited(0.25, 20), [0, 0]);
  });
  it('sends a rare group to the engine its last request went to, with the credit of a home', () => {
    const pods = fleet(8);
    const rendezvous = place(pods, 11, 22).ids;
    const elsewhere = pods.find((p) => p.id === rendezvous[3]);
    assert.ok(elsewhere !== undefined);
    const followed = (share: number) => {
      const context = contextOf(pods, facts({ prefix: prefixFacts(11, 22, { share, sharedPrefixTokens: 4_096, placedOn: elsewhere.idHash }) }));
      const count = scorer.order(context, MAX_ORDERED, order, credit);
      return { ids: [...order.subarray(0, count)].map((i) => pods[i]?.id), credit: [...credit.subarray(0, count)] };
    };
    const rare = followed(0.01);
    assert.equal(rare.ids[0], elsewhere.id, 'placed off its home: it follows the placement');
    assert.deepEqual(rare.ids.slice(1), rendezvous.filter((id) => id !== elsewhere.id), 'then the group order');
    assert.deepEqual(rare.credit.slice(0, 2), [0.5, 0]);
    // A group spread over several engines goes by its conversations' order, wherever its last request went.
    assert.deepEqual(followed(0.25).ids, place(pods, 11, 22, 0.25).ids);
    // The placed engine holds at least what the group hash covers: 8 KiB, 2,048 tokens, a quarter of full credit.
    assert.equal(followed(0.01).credit[0], 0.5, 'the shared prefix beyond it counts when known');
    const fleetPlaced = contextOf(pods, facts({ prefix: prefixFacts(11, 22, { share: 0, blockCount: 20, placedOn: elsewhere.idHash }) }));
    scorer.order(fleetPlaced, MAX_ORDERED, order, credit);
    assert.equal(pods[order[0] as number]?.id, elsewhere.id, "another replica's placement (Redis) is followed like one's own");
    assert.equal(credit[0], 0.25);
    // Placed by another replica on an engine that is no candidate here, on traffic without reuse: by load.
    const elsewhereOnly = facts({ prefix: prefixFacts(11, 22, { share: 0, reuse: 0.01, placedOn: 12345 }) });
    assert.equal(scorer.applies(elsewhereOnly), true);
    assert.equal(scorer.order(contextOf(pods, elsewhereOnly), MAX_ORDERED, order, credit), 0);
    // A placement on an engine that is not a candidate any more changes nothing.
    const gone = contextOf(pods, facts({ prefix: prefixFacts(11, 22, { share: 0.01, placedOn: 12345 }) }));
    const count = scorer.order(gone, MAX_ORDERED, order, credit);
    assert.deepEqual([...order.subarray(0, count)].map((i) => pods[i]?.id), rendezvous);
  });
  it('spreads the conversations of a group that is much of the traffic over about spread × N × share engines', () => {
    const pods = fleet(8);
    const homes = new Set<string | undefined>();
    for (let c = 0; c < 400; c++) homes.add(place(pods, c, 7, 0.25).ids[0]);
    // k = ⌈2 × 8 × 0.25⌉ = 4 engines in the first tier.
    assert.equal(homes.size, 4);
    const everyone = new Set<string | undefined>();
    for (let c = 0; c < 400; c++) everyone.add(place(pods, c, 7, 1, 100).ids[0]);
    assert.equal(everyone.size, 8);
  });
  it('leaves a prompt without history of a group every engine serves to least load: an identical prompt sent many times is spread, not piled on a few engines', () => {
    const pods = fleet(8);
    assert.deepEqual(place(pods, 3, 7, 1).ids, [], 'declined: every engine holds what it can reuse');
    assert.deepEqual(place(pods, 3, 7, 0.5).ids, [], 'a tier of ⌈2 × 8 × 0.5⌉ = 8: every engine');
    assert.equal(place(pods, 3, 7, 0.25).ids.length, 8, 'a tier of 4 is a subset: ordered');
    assert.equal(place(pods, 3, 7, 1, 100).ids.length, 8, 'a later turn goes to its conversation home');
  });
  it('gives the home credit for the history it holds, the rest of the first tier none without a shared prefix', () => {
    const { credit: given } = place(fleet(8), 1, 2, 0, 4_096);
    assert.equal(given[0], 0.5);
    assert.ok(given.slice(1).every((c) => c === 0));
  });
  it("gives the first tier the group's shared prefix as credit only while the tier is a subset of the engines", () => {
    const subset = new PrefixAffinityScorer();
    const context = (share: number) => contextOf(fleet(8), facts({ prefix: prefixFacts(1, 2, { share, sharedPrefixTokens: 8_192 }) }));
    subset.order(context(0.125), MAX_ORDERED, order, credit); // tier of 2 engines
    assert.deepEqual([...credit.subarray(0, 3)], [1, 1, 0]);
    const everyone = contextOf(fleet(8), facts({ prefix: prefixFacts(1, 2, { share: 1, sharedPrefixTokens: 8_192, historyTokens: 100 }) }));
    subset.order(everyone, MAX_ORDERED, order, credit); // every engine in the tier: no engine gains by keeping it
    assert.deepEqual([...credit.subarray(0, 3)], [100 / 8_192, 0, 0], 'only the history at home');
  });
  it('moves about 1/N of conversations when an engine is added', () => {
    const before = fleet(10);
    const after = [...before, ep('pod-new')];
    let moved = 0;
    for (let c = 0; c < 4000; c++) if (place(before, c, c * 7919).ids[0] !== place(after, c, c * 7919).ids[0]) moved++;
    assert.ok(moved / 4000 <= 1 / 11 + 0.02, `${moved} of 4000 moved`);
  });
  it('ranks large fleets by a full sort with the same result as selection', () => {
    const pods = fleet(300);
    const wide = place(pods, 5, 9, 0.5, 100).ids;
    assert.equal(wide.length, MAX_ORDERED);
    assert.equal(new Set(wide).size, MAX_ORDERED);
    assert.deepEqual(place([...pods].reverse(), 5, 9, 0.5, 100).ids[0], wide[0]);
  });
});

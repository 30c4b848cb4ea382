import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BALANCE_FLOOR } from '../load-bound.ts';
import type { OrderingScorer } from '../pick.ts';
import { kvUsageScorer } from '../scorers/kv-usage.ts';
import { loadScoreScorer } from '../scorers/load-score.ts';
import { SessionRendezvousScorer } from '../scorers/session-rendezvous.ts';
import { contextOf, ep, facts, fleet, seeded } from '../../../tests/kit/scheduling-fixtures.ts';
import { BoundedWalkPicker } from './bounded-walk.ts';
import { RoundRobinPicker } from './round-robin.ts';
import { WeightedMaxPicker } from './weighted-max.ts';

const leastLoad = (sampleTwo = false) =>
  new WeightedMaxPicker(
    [
      { scorer: loadScoreScorer, weight: 1 },
      { scorer: kvUsageScorer, weight: 0.001 },
    ],
    seeded(7),
    { sampleTwo },
  );

describe('weighted maximum picker', () => {
  it('orders by load score, then KV-cache usage (least-load weights)', () => {
    const candidates = [ep('a', 0.5), ep('b', 0.1), ep('c', 0.1, { kvCacheUsage: 0.3 }), ep('d', 0.1, { kvCacheUsage: 0.2 })];
    assert.deepEqual(leastLoad().pick(contextOf(candidates)).ordered.map((e) => e.id), ['b', 'd', 'c', 'a']);
  });
  it('breaks ties at random so equal endpoints share first place', () => {
    const picker = leastLoad();
    const context = contextOf(['a', 'b', 'c', 'd'].map((id) => ep(id)));
    const firsts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const id = picker.pick(context).ordered[0]?.id ?? '';
      firsts.set(id, (firsts.get(id) ?? 0) + 1);
    }
    assert.equal(firsts.size, 4);
    for (const count of firsts.values()) assert.ok(count > 800 && count < 1200, `uneven: ${[...firsts.values()].join(',')}`);
  });
  it('with power of two choices, returns the better of two', () => {
    const picker = leastLoad(true);
    const context = contextOf(Array.from({ length: 50 }, (_, i) => ep(`e${i}`, i)));
    for (let i = 0; i < 100; i++) {
      const [first, second] = picker.pick(context).ordered;
      assert.ok(first && second && first.loadScore <= second.loadScore);
    }
  });
  it('lets a weight change the choice', () => {
    const candidates = [ep('busy-roomy', 0.3, { kvCacheUsage: 0 }), ep('idle-full', 0.2, { kvCacheUsage: 0.9 })];
    const cacheFirst = new WeightedMaxPicker([{ scorer: loadScoreScorer, weight: 1 }, { scorer: kvUsageScorer, weight: 1 }], seeded(1));
    assert.equal(leastLoad().pick(contextOf(candidates)).ordered[0]?.id, 'idle-full');
    assert.equal(cacheFirst.pick(contextOf(candidates)).ordered[0]?.id, 'busy-roomy');
  });
});

describe('bounded walk picker', () => {
  const walk = new BoundedWalkPicker(new SessionRendezvousScorer(), { epsilon: 0.25, kappa: 0, floor: BALANCE_FLOOR });
  const keyed = facts({ sessionKey: 'k' });

  it('declines without a key, naming its fallback outcome', () => {
    assert.equal(walk.pick(contextOf(fleet(4))), undefined);
    assert.equal(walk.declinedOutcome, 'no_key_fallback');
  });
  it('walks on in rendezvous order when the home is far above the mean', () => {
    const pods = fleet(4);
    const home = walk.pick(contextOf(pods, keyed))?.ordered ?? [];
    const busyHome = pods.map((p) => ({ ...p, loadScore: p.id === home[0]?.id ? 0.9 : 0.2 }));
    const spilled = walk.pick(contextOf(busyHome, keyed));
    assert.equal(spilled?.outcome, 'affinity_spill');
    assert.equal(spilled?.ordered[0]?.id, home[1]?.id);
  });
  it('keeps a conversation home while its endpoint has free batch slots, even above the mean', () => {
    const pods = fleet(4);
    const home = walk.pick(contextOf(pods, keyed))?.ordered[0]?.id;
    const lightly = pods.map((p) => (p.id === home ? { ...p, loadScore: 0.3 } : p));
    const pick = walk.pick(contextOf(lightly, keyed));
    assert.equal(pick?.ordered[0]?.id, home);
    assert.equal(pick?.outcome, 'affinity_hit');
  });
  it('lets a candidate with cache credit run hotter (kappa)', () => {
    // A fixed order: the home (full credit), then the other (none).
    const fixed: OrderingScorer = {
      name: 'fixed',
      outcomes: { hit: 'prefix_hit', spill: 'prefix_spill', declined: 'prefix_fallback' },
      applies: () => true,
      order: (_context, _max, order, credit) => {
        order.set([0, 1]);
        credit.set([1, 0]);
        return 2;
      },
    };
    // Mean 1.1: the home at 2.0 is over (1 + 0.5) × mean but under (1 + 0.5 + 2) × mean.
    const candidates = [ep('home', 2), ep('other', 0.2)];
    const withCredit = new BoundedWalkPicker(fixed, { epsilon: 0.5, kappa: 2, floor: BALANCE_FLOOR });
    assert.equal(withCredit.pick(contextOf(candidates))?.outcome, 'prefix_hit');
    const withoutCredit = new BoundedWalkPicker(fixed, { epsilon: 0.5, kappa: 0, floor: BALANCE_FLOOR });
    assert.equal(withoutCredit.pick(contextOf(candidates))?.ordered[0]?.id, 'other');
  });
});

describe('round-robin picker', () => {
  it('takes each endpoint in turn, ignoring load', () => {
    const picker = new RoundRobinPicker();
    const context = contextOf(['a', 'b', 'c'].map((id) => ep(id, id === 'a' ? 100 : 0)));
    assert.deepEqual(Array.from({ length: 6 }, () => picker.pick(context).ordered[0]?.id), ['a', 'b', 'c', 'a', 'b', 'c']);
  });
});

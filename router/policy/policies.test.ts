import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { hashString } from '../load/hash.ts';
import { LeastLoadPolicy } from './least-load.ts';
import type { EndpointLoad, RequestFacts } from './policy.ts';
import { RoundRobinPolicy } from './round-robin.ts';
import { SessionAffinityPolicy } from './session-affinity.ts';
import { topKIndices } from './select.ts';

interface Fake extends EndpointLoad {
  estimatedWaiting: number;
}
const ep = (id: string, loadScore = 0, extra: Partial<Fake> = {}): Fake => ({
  id,
  idHash: hashString(id),
  inFlight: 0,
  loadScore,
  kvCacheUsage: 0,
  ejected: false,
  estimatedWaiting: 0,
  ...extra,
});
const facts = (sessionKey?: string): RequestFacts => ({ model: 'm', stream: false, sessionKey, bodyBytes: 1 });
const never = () => false;
let seed = 1;
const random = () => {
  seed = (Math.imul(seed, 48271) >>> 0) % 2147483647;
  return seed / 2147483647;
};

describe('top-k selection', () => {
  it('equals sorting and slicing (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer({ min: 1, max: 10 }), (items, k) => {
        const picked = topKIndices(items.length, k, (i, j) => (items[i] as number) < (items[j] as number)).map((i) => items[i]);
        assert.deepEqual(picked, [...items].sort((a, b) => a - b).slice(0, k));
      }),
    );
  });
});

describe('least-load', () => {
  it('orders by load score, then KV-cache usage', () => {
    const policy = new LeastLoadPolicy(random);
    const order = policy.order(facts(), [ep('a', 0.5), ep('b', 0.1), ep('c', 0.1, { kvCacheUsage: 0.3 }), ep('d', 0.1, { kvCacheUsage: 0.2 })], never).ordered;
    assert.deepEqual(order.map((e) => e.id), ['b', 'd', 'c', 'a']);
  });

  it('breaks ties at random so equal endpoints share first place', () => {
    const policy = new LeastLoadPolicy(random);
    const candidates = ['a', 'b', 'c', 'd'].map((id) => ep(id));
    const firsts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const id = policy.order(facts(), candidates, never).ordered[0]?.id ?? '';
      firsts.set(id, (firsts.get(id) ?? 0) + 1);
    }
    assert.equal(firsts.size, 4);
    for (const count of firsts.values()) assert.ok(count > 800 && count < 1200, `uneven: ${[...firsts.values()].join(',')}`);
  });

  it('with power of two choices, returns the better of two', () => {
    const policy = new LeastLoadPolicy(random, true);
    const candidates = Array.from({ length: 50 }, (_, i) => ep(`e${i}`, i));
    for (let i = 0; i < 100; i++) {
      const [first, second] = policy.order(facts(), candidates, never).ordered;
      assert.ok(first && second && first.loadScore <= second.loadScore);
    }
  });
});

describe('session affinity', () => {
  const policy = new SessionAffinityPolicy(0.25, new LeastLoadPolicy(random));
  const fleet = (n: number) => Array.from({ length: n }, (_, i) => ep(`pod-${i}`));

  it('sends a key to the same endpoint whatever the candidate order', () => {
    const pods = fleet(8);
    const first = policy.order(facts('user-42'), pods, never);
    assert.equal(first.outcome, 'affinity_hit');
    const again = policy.order(facts('user-42'), [...pods].reverse(), never);
    assert.equal(again.ordered[0]?.id, first.ordered[0]?.id);
  });

  it('spreads keys evenly over endpoints', () => {
    const pods = fleet(4);
    const counts = new Map<string, number>();
    for (let i = 0; i < 8000; i++) {
      const id = policy.order(facts(`k${i}`), pods, never).ordered[0]?.id ?? '';
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const count of counts.values()) assert.ok(count > 1700 && count < 2300, [...counts.values()].join(','));
  });

  it('moves at most 1/N + 2% of keys when one of N endpoints is added (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), fc.string({ minLength: 1, maxLength: 8 }), (n, salt) => {
        const before = fleet(n);
        const after = [...before, ep(`pod-new-${salt}`)];
        let moved = 0;
        const keys = 2000;
        for (let i = 0; i < keys; i++) {
          const key = `${salt}-session-${i}`;
          if (policy.order(facts(key), before, never).ordered[0]?.id !== policy.order(facts(key), after, never).ordered[0]?.id) moved++;
        }
        assert.ok(moved / keys <= 1 / n + 0.02, `${moved} of ${keys} keys moved with N=${n}`);
      }),
      { numRuns: 30 },
    );
  });

  it('walks on in rendezvous order when the chosen endpoint is saturated or far above the mean', () => {
    const pods = fleet(4);
    const home = policy.order(facts('k'), pods, never).ordered;
    const saturatedHome = pods.map((p) => (p.id === home[0]?.id ? { ...p, estimatedWaiting: 9 } : p));
    const spilled = policy.order(facts('k'), saturatedHome, (e) => e.estimatedWaiting >= 5);
    assert.equal(spilled.outcome, 'affinity_spill');
    assert.equal(spilled.ordered[0]?.id, home[1]?.id, 'the next endpoint in rendezvous order');
    const busyHome = pods.map((p) => (p.id === home[0]?.id ? { ...p, loadScore: 0.9 } : { ...p, loadScore: 0.2 }));
    assert.equal(policy.order(facts('k'), busyHome, never).ordered[0]?.id, home[1]?.id);
  });

  it('keeps a conversation home while its endpoint has free batch slots, even above the mean', () => {
    const pods = fleet(4);
    const home = policy.order(facts('k'), pods, never).ordered[0]?.id;
    const lightlyLoaded = pods.map((p) => (p.id === home ? { ...p, loadScore: 0.3 } : p));
    assert.equal(policy.order(facts('k'), lightlyLoaded, never).ordered[0]?.id, home);
  });

  it('falls back to least-load without a key', () => {
    const decision = policy.order(facts(), [ep('a', 0.9), ep('b', 0.1)], never);
    assert.equal(decision.outcome, 'no_key_fallback');
    assert.equal(decision.ordered[0]?.id, 'b');
  });
});

describe('round-robin', () => {
  it('takes each endpoint in turn', () => {
    const policy = new RoundRobinPolicy();
    const pods = ['a', 'b', 'c'].map((id) => ep(id, id === 'a' ? 100 : 0));
    const firsts = Array.from({ length: 6 }, () => policy.order(facts(), pods, never).ordered[0]?.id);
    assert.deepEqual(firsts, ['a', 'b', 'c', 'a', 'b', 'c']);
  });
});

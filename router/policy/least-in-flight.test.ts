import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LeastInFlightPolicy } from './least-in-flight.ts';
import type { RequestFacts } from './policy.ts';

const facts: RequestFacts = { model: 'm', stream: false, sessionKey: undefined, bodyBytes: 10 };

/** mulberry32: a small deterministic generator of floats in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed | 0;
  return () => {
    let t = (s = (s + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('least-in-flight policy', () => {
  it('returns every candidate once, ordered by in-flight count, without mutating the input (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 50 }), { maxLength: 30 }), fc.integer(), (counts, seed) => {
        const candidates = counts.map((inFlight, i) => ({ id: `e${i}`, inFlight }));
        const copy = candidates.map((c) => ({ ...c }));
        const ordered = new LeastInFlightPolicy(seeded(seed)).order(facts, candidates);
        assert.deepEqual(candidates, copy);
        assert.deepEqual(new Set(ordered.map((c) => c.id)), new Set(candidates.map((c) => c.id)));
        assert.equal(ordered.length, candidates.length);
        for (let i = 1; i < ordered.length; i++) assert.ok((ordered[i - 1]?.inFlight ?? 0) <= (ordered[i]?.inFlight ?? 0));
      }),
    );
  });

  it('breaks ties at random so equal endpoints share first place', () => {
    const policy = new LeastInFlightPolicy(seeded(42));
    const candidates = [0, 1, 2, 3].map((i) => ({ id: `e${i}`, inFlight: 1 }));
    const firsts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const id = policy.order(facts, candidates)[0]?.id ?? '';
      firsts.set(id, (firsts.get(id) ?? 0) + 1);
    }
    for (const count of firsts.values()) assert.ok(count > 800 && count < 1200, `uneven tie-breaking: ${[...firsts.values()].join(',')}`);
  });
});

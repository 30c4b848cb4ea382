import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { poissonSchedule } from './poisson.ts';

const spec = { ratePerS: 80, lengthMs: 60_000, sessionShare: 0.5, sessions: 40, seed: 7 };

describe('poissonSchedule', () => {
  it('is the same schedule for the same seed, and a different one for another seed', () => {
    assert.deepEqual(poissonSchedule(spec), poissonSchedule(spec));
    assert.notDeepEqual(poissonSchedule(spec).slice(0, 10), poissonSchedule({ ...spec, seed: 8 }).slice(0, 10));
  });

  it('arrives at the asked rate, in order, inside the window, with the asked session share', () => {
    const arrivals = poissonSchedule(spec);
    const expected = (spec.ratePerS * spec.lengthMs) / 1000;
    assert.ok(Math.abs(arrivals.length - expected) < 4 * Math.sqrt(expected), `${arrivals.length} arrivals, expected about ${expected}`);
    assert.ok(arrivals.every((a, i) => a.index === i && a.atMs >= 0 && a.atMs < spec.lengthMs && (i === 0 || a.atMs >= (arrivals[i - 1]?.atMs ?? 0))));
    const keyed = arrivals.filter((a) => a.sessionKey !== undefined);
    assert.ok(Math.abs(keyed.length / arrivals.length - 0.5) < 0.03);
    assert.equal(new Set(keyed.map((a) => a.sessionKey)).size, spec.sessions);
  });

  it('numbers the turns of each conversation 1, 2, 3, ...; one-shot requests are turn 1', () => {
    const seen = new Map<string, number>();
    for (const a of poissonSchedule(spec)) {
      if (a.sessionKey === undefined) {
        assert.equal(a.turn, 1);
        continue;
      }
      assert.equal(a.turn, (seen.get(a.sessionKey) ?? 0) + 1);
      seen.set(a.sessionKey, a.turn);
    }
  });
});

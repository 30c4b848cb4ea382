import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { gcraStep } from './gcra.ts';

describe('gcraStep', () => {
  it('passes the burst at once, then one request per interval', () => {
    let tat: number | undefined;
    const at0 = [0, 1, 2, 3].map(() => {
      const step = gcraStep(tat, 0, 100, 3);
      if (step.allowed) tat = step.tat;
      return [step.allowed, step.remaining, step.retryAfterMs, step.resetMs];
    });
    assert.deepEqual(at0, [
      [true, 2, 0, 100],
      [true, 1, 0, 200],
      [true, 0, 0, 300],
      [false, 0, 100, 300],
    ]);
    assert.equal(gcraStep(tat, 99, 100, 3).allowed, false);
    assert.equal(gcraStep(tat, 100, 100, 3).allowed, true);
  });

  it('admits burst + rate x window when offered more (within one request: the sampling edge), never more; fractional intervals add up without drift', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 50 }), (ratePerS, burst, offeredPerInterval) => {
        const interval = 1000 / ratePerS;
        const windowMs = 2_000;
        let tat: number | undefined;
        let passed = 0;
        let offered = 0;
        const step = interval / offeredPerInterval / 2;
        for (let now = 0; now <= windowMs; now += step) {
          offered++;
          const result = gcraStep(tat, now, interval, burst);
          if (result.allowed) {
            passed++;
            tat = result.tat;
          }
        }
        const bound = burst + Math.floor(windowMs / interval + 1e-9);
        // Offered fewer than the bound (a large burst at a low rate): every one passes.
        return passed <= bound && passed >= Math.min(offered, bound - 1);
      }),
      { numRuns: 200 },
    );
  });
});

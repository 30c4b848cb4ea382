import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admittedPerS, atMostShareAbove, perRequest, relativeTo, shedAgrees, shedNoise, spread, waitingImbalance } from './shared-state-figures.ts';

describe('spread', () => {
  it('takes the middle value of an odd count and the range', () => {
    assert.deepEqual(spread([5, 1, 3, 9, 4]), { median: 4, min: 1, max: 9, runs: 5 });
  });

  it('averages the middle two of an even count and skips values that are not finite', () => {
    assert.deepEqual(spread([4, Number.NaN, 2, 8, 6]), { median: 5, min: 2, max: 8, runs: 5 });
  });

  it('has no median without a finite value', () => {
    assert.ok(Number.isNaN(spread([Number.NaN]).median));
  });
});

describe('admittedPerS', () => {
  it('is answered requests over the window in seconds', () => {
    assert.equal(admittedPerS(750, 15_000), 50);
    assert.ok(Number.isNaN(admittedPerS(10, 0)));
  });
});

describe('waitingImbalance', () => {
  it('is the largest time-averaged queue over the mean queue', () => {
    assert.equal(waitingImbalance([1, 1, 2, 4]), 2);
  });

  it('calls a fleet with no queue anywhere balanced', () => {
    assert.equal(waitingImbalance([0, 0, 0, 0]), 1);
  });
});

describe('atMostShareAbove', () => {
  it('accepts up to the share above the reference, and anything below it', () => {
    assert.equal(atMostShareAbove(110, 100, 0.1), true);
    assert.equal(atMostShareAbove(80, 100, 0.1), true);
    assert.equal(atMostShareAbove(111, 100, 0.1), false);
  });

  it('never passes a missing figure', () => {
    assert.equal(atMostShareAbove(Number.NaN, 100, 0.1), false);
    assert.equal(atMostShareAbove(1, Number.NaN, 0.1), false);
  });
});

describe('shedAgrees', () => {
  it('compares the shed shares of two runs relative to the reference', () => {
    assert.equal(shedAgrees({ shed: 104, measured: 1000 }, { shed: 100, measured: 1000 }, 0.05), true);
    assert.equal(shedAgrees({ shed: 106, measured: 1000 }, { shed: 100, measured: 1000 }, 0.05), false);
    assert.equal(shedAgrees({ shed: 95, measured: 950 }, { shed: 100, measured: 1000 }, 0.05), true);
  });

  it('lets two runs that shed nothing agree, and one that sheds against none not', () => {
    assert.equal(shedAgrees({ shed: 0, measured: 1000 }, { shed: 0, measured: 1000 }, 0.05), true);
    assert.equal(shedAgrees({ shed: 1, measured: 1000 }, { shed: 0, measured: 1000 }, 0.05), false);
  });
});

describe('per-request costs', () => {
  it('divides an amount by the requests, NaN without requests or without an amount', () => {
    assert.equal(perRequest(300, 100), 3);
    assert.ok(Number.isNaN(perRequest(300, 0)));
    assert.ok(Number.isNaN(perRequest(Number.NaN, 100)));
  });

  it('gives a signed relative difference', () => {
    assert.ok(Math.abs(relativeTo(1.1, 1) - 0.1) < 1e-9);
    assert.ok(Number.isNaN(relativeTo(1, 0)));
  });
});

describe('shedNoise', () => {
  it('is two standard errors of the difference of two Poisson shares', () => {
    // 40 and 40 of 1,800: each share's variance 40 / 1800²; two of them, square root, times two.
    assert.ok(Math.abs(shedNoise({ shed: 40, measured: 1800 }, { shed: 40, measured: 1800 }) - (2 * Math.sqrt(80)) / 1800) < 1e-12);
    assert.ok(Number.isNaN(shedNoise({ shed: 1, measured: 0 }, { shed: 1, measured: 10 })));
  });
});

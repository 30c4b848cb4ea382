import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BALANCE_FLOOR, loadLimit } from './load-bound.ts';

describe('load bound', () => {
  const session = { epsilon: 0.25, kappa: 0, floor: BALANCE_FLOOR };
  const prefix = { epsilon: 0.5, kappa: 2, floor: BALANCE_FLOOR, creditFloorOnly: true };
  it('allows (1 + ε + κ·credit) × the mean, and never less than the floor', () => {
    assert.equal(loadLimit(session, 0.8, 0), 1);
    assert.equal(loadLimit(session, 0.1, 0), BALANCE_FLOOR);
    assert.ok(Math.abs(loadLimit(prefix, 0.4, 1) - 1.4) < 1e-12);
    assert.equal(loadLimit(prefix, 0.1, 0.5), BALANCE_FLOOR);
  });
  it('holds the floor only for a candidate with credit when so configured: nothing cached there to stay for', () => {
    assert.ok(Math.abs(loadLimit(prefix, 0.1, 0) - 0.15) < 1e-12);
  });
});

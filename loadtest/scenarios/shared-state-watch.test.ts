import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convergence, type FleetSample } from './shared-state-watch.ts';

const sample = (atMs: number, agrees: boolean): FleetSample => ({ atMs, up: agrees ? 3 : 0, minFleet: agrees ? 3 : Number.NaN, agrees });

describe('convergence', () => {
  it('times the first agreement after the event and the one that held to the end of the window', () => {
    const samples = [sample(0, true), sample(100, false), sample(200, false), sample(300, true), sample(400, false), sample(500, true), sample(600, true)];
    assert.deepEqual(convergence(samples, 150, 700), { firstMs: 150, settledMs: 350 });
  });

  it('is settled at the first agreement when nothing fell apart after it', () => {
    const samples = [sample(100, false), sample(200, true), sample(300, true)];
    assert.deepEqual(convergence(samples, 100, 400), { firstMs: 100, settledMs: 100 });
  });

  it('has not settled when the window ends without agreement, even after agreeing once', () => {
    const samples = [sample(100, false), sample(200, true), sample(300, false)];
    assert.deepEqual(convergence(samples, 100, 400), { firstMs: 100, settledMs: undefined });
  });

  it('only looks at the samples before the window ends', () => {
    const samples = [sample(100, false), sample(200, false), sample(300, true)];
    assert.deepEqual(convergence(samples, 100, 250), { firstMs: undefined, settledMs: undefined });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quantile, summarize } from './stats.ts';

describe('latency statistics', () => {
  it('uses nearest-rank quantiles', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(quantile(sorted, 0.5), 50);
    assert.equal(quantile(sorted, 0.99), 99);
    assert.equal(quantile(sorted, 1), 100);
    assert.equal(quantile([7], 0.99), 7);
    assert.ok(Number.isNaN(quantile([], 0.5)));
  });

  it('summarizes unsorted samples without reordering them', () => {
    const samples = [5, 1, 4, 2, 3];
    assert.deepEqual(summarize(samples), { p50: 3, p90: 5, p99: 5, max: 5 });
    assert.deepEqual(samples, [5, 1, 4, 2, 3]);
  });
});

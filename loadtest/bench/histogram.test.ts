import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram } from './histogram.ts';
import { quantile } from './stats.ts';
import { seededRng } from '../sim/random.ts';

test('quantiles are within 1% of the exact nearest-rank values', () => {
  const random = seededRng(7);
  const values = Array.from({ length: 20_000 }, () => Math.exp(random() * 10) / 10);
  const histogram = new Histogram();
  for (const v of values) histogram.record(v);
  const sorted = [...values].sort((a, b) => a - b);
  for (const q of [0.01, 0.5, 0.9, 0.99, 0.999]) {
    const exact = quantile(sorted, q);
    const approx = histogram.quantile(q);
    assert.ok(approx >= exact * 0.999 && approx <= exact * 1.011, `q=${q}: ${approx} vs exact ${exact}`);
  }
  assert.equal(histogram.quantile(1), sorted.at(-1));
});

test('merging snapshots equals recording everything in one histogram', () => {
  const a = new Histogram();
  const b = new Histogram();
  const all = new Histogram();
  for (let i = 0; i < 1000; i++) {
    const v = (i * 37) % 500;
    (i % 2 === 0 ? a : b).record(v);
    all.record(v);
  }
  const merged = Histogram.of([a.snapshot(), JSON.parse(JSON.stringify(b.snapshot())) as ReturnType<Histogram['snapshot']>]);
  assert.deepEqual(merged.percentiles(), all.percentiles());
  assert.equal(merged.count, 1000);
});

test('an empty histogram reports NaN, and bad values are refused', () => {
  const empty = new Histogram();
  assert.ok(Number.isNaN(empty.percentiles().p99));
  assert.throws(() => empty.record(-1));
  assert.throws(() => empty.record(Number.NaN));
  empty.record(0);
  assert.equal(empty.quantile(0.5), 0);
});

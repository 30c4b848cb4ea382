import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram } from './histogram.ts';
import { mergeSeconds, PerSecond } from './per-second.ts';

test('seconds keep failures, tokens, TTFT and gaps where they ended, a straggler included, and merge across generators', () => {
  const seconds = new PerSecond();
  seconds.success(0, 10, [1, 2], 5);
  seconds.failure(0);
  seconds.success(2, 30, [], 7);
  seconds.success(5, 50, [3], 1); // closes seconds 0 and 2 into snapshots
  seconds.success(0, 20, [], 4); // a straggler reopens second 0
  const out = seconds.snapshot();
  assert.equal(out.length, 6);
  assert.deepEqual(out.map((s) => [s.failed, s.outputTokens]), [[1, 9], [0, 0], [0, 7], [0, 0], [0, 0], [0, 1]]);
  assert.equal(Histogram.of([out[0]!.ttft]).count, 2);
  assert.equal(Histogram.of([out[0]!.itl]).count, 2);
  assert.equal(Histogram.of([out[1]!.ttft]).count, 0);

  const other = new PerSecond();
  other.failure(7);
  const merged = mergeSeconds([out, other.snapshot()]);
  assert.equal(merged.length, 8);
  assert.equal(merged[0]?.outputTokens, 9);
  assert.equal(merged[7]?.failed, 1);
  assert.equal(Histogram.of([merged[5]!.itl]).count, 1);
});

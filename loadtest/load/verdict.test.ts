import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeResults } from '../bench/generators.ts';
import { Histogram } from '../bench/histogram.ts';
import type { LoadResult } from '../bench/load-spec.ts';
import { keptUp } from './verdict.ts';

function result(sendLagMs: number, cpuShare: number): LoadResult {
  const lag = new Histogram();
  for (let i = 0; i < 100; i++) lag.record(sendLagMs);
  const none = new Histogram().snapshot();
  return { measured: 100, ok: 100, shed: 0, failed: 0, failureKinds: {}, failureExamples: [], e2e: none, ttft: none, itl: none, sendLag: lag.snapshot(), timeline: [], seconds: [], tokens: { output: none, fromUsage: 0, prompt: none, askedOutput: 0, askedPrompt: 0 }, windowMs: 1000, cpuShare, loopDelayP99Ms: 3 };
}

test('kept up: yes with the send lag when on schedule; NO with the reason and the remedy when late or out of CPU', () => {
  const calm = keptUp(mergeResults([result(0.4, 0.2)]), { kind: 'rate', perS: 20 });
  assert.equal(calm.keptUp, true);
  assert.match(calm.line, /^yes: requests went out on schedule \(send lag p99 0\.4 ms; busiest generator process at 20% of a core; event-loop delay p99 3 ms\)$/);
  assert.ok(calm.sendLagP99Ms !== undefined && calm.sendLagP99Ms < 0.5);

  const late = keptUp(mergeResults([result(40, 0.5)]), { kind: 'rate', perS: 2000 });
  assert.equal(late.keptUp, false);
  assert.match(late.line, /^NO: generator 0 sent late \(p99 40 ms behind schedule\)\. These numbers may measure this client, not the target: rerun with --processes 2/);

  const closed = keptUp(mergeResults([result(0, 0.97), result(0, 0.1)]), { kind: 'concurrency', clients: 64 });
  assert.equal(closed.keptUp, false);
  assert.match(closed.line, /generator 0 used 97% of a core.*--processes 4.*closed loop/);
  assert.equal(closed.sendLagP99Ms, undefined);
});

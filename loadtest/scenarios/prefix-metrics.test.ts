import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { coreBusy, hitRatio, parseCacheCounters, runningBalance, summarizeWindow, type TurnRecord } from './prefix-metrics.ts';

describe('prefix benchmark figures', () => {
  it('reads vLLM prefix-cache counters, summed over label sets, and nothing else', () => {
    const text = [
      '# TYPE vllm:prefix_cache_queries_total counter',
      'vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1200.0',
      'vllm:prefix_cache_queries_total{engine="1",model_name="m"} 800.0',
      'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 900.0',
      'vllm:prefix_cache_hits_created{engine="0",model_name="m"} 1.7e9',
      'vllm:gpu_prefix_cache_hits_total{engine="0"} 5',
    ].join('\n');
    assert.deepEqual(parseCacheCounters(text), { queries: 2000, hits: 900 });
    assert.deepEqual(parseCacheCounters('vllm:num_requests_running 3'), { queries: 0, hits: 0 });
  });

  it('weights the hit ratio by tokens (a ratio of sums, not a mean of ratios); a restarted engine counts from 0', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(1e6), fc.nat(1e6), fc.nat(1e6), fc.nat(1e6)), { minLength: 1, maxLength: 8 }), (engines) => {
        const before = engines.map(([q, h]) => ({ queries: q + h, hits: h }));
        const after = engines.map(([q, h, dq, dh]) => ({ queries: q + h + dq + dh, hits: h + dh }));
        const queried = engines.reduce((n, [, , dq, dh]) => n + dq + dh, 0);
        const hit = engines.reduce((n, [, , , dh]) => n + dh, 0);
        const result = hitRatio(before, after);
        assert.equal(result.queries, queried);
        assert.equal(result.hits, hit);
        if (queried > 0) assert.equal(result.ratio, hit / queried);
        else assert.ok(Number.isNaN(result.ratio));
      }),
    );
    // One engine with 1,000 tokens at 0.9 and one with 10 tokens at 0: 900/1010, not 0.45.
    assert.equal(hitRatio([{ queries: 0, hits: 0 }, { queries: 0, hits: 0 }], [{ queries: 1000, hits: 900 }, { queries: 10, hits: 0 }]).ratio, 900 / 1010);
    assert.deepEqual(hitRatio([{ queries: 500, hits: 400 }], [{ queries: 100, hits: 50 }]), { ratio: 0.5, hits: 50, queries: 100 });
  });

  it('running balance: 1 when even, N when one engine runs everything, idle samples skipped', () => {
    assert.equal(runningBalance([[3, 3, 3, 3]]).maxOverMean, 1);
    assert.equal(runningBalance([[8, 0, 0, 0]]).maxOverMean, 4);
    const mixed = runningBalance([[2, 2], [0, 0], [3, 1]]);
    assert.equal(mixed.maxOverMean, (1 + 1.5) / 2);
    assert.equal(mixed.meanRunning, 8 / 6);
    assert.equal(mixed.samples, 3);
    assert.ok(Number.isNaN(runningBalance([[0, 0]]).maxOverMean));
  });

  it('core busy share between two readings; NaN without one', () => {
    const busy = coreBusy([{ busy: 100, total: 1000 }, undefined], [{ busy: 400, total: 2000 }, { busy: 1, total: 2 }]);
    assert.equal(busy[0], 0.3);
    assert.ok(Number.isNaN(busy[1]));
  });

  it('summarizes only requests due in the window; TTFT over served ones; throughput by end time', () => {
    const r = (dueMs: number, outcome: TurnRecord['outcome'], ttftMs: number | undefined, endMs = dueMs + 500, error?: string): TurnRecord => ({ dueMs, sendLagMs: 1, ttftMs, endMs, outcome, error });
    const records = [r(500, 'ok', 5), r(1000, 'ok', 10), r(1500, 'ok', 30), r(1600, 'shed', undefined), r(1700, 'failed', undefined, 1800, 'status 502'), r(1800, 'failed', undefined, 1900, 'status 502'), r(3000, 'ok', 1)];
    const w = summarizeWindow(records, 1000, 3000);
    assert.deepEqual([w.sent, w.served, w.shed, w.failed], [5, 2, 1, 2]);
    assert.deepEqual(w.failures, { 'status 502': 2 });
    assert.equal(w.ttftP50, 10);
    assert.equal(w.ttftP99, 30);
    // Ended in [1000, 3000) and served: 1000 (due 500), 1500 (due 1000), 2000 (due 1500).
    assert.equal(w.completedPerS, 1.5);
  });
});

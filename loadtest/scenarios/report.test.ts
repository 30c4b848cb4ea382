import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judge, ttftChart } from './report.ts';
import { failedBars } from './results.ts';
import type { PolicyResult } from './run-policy.ts';

const FULL = { quick: false, smoke: false } as const;
const QUICK = { quick: true, smoke: false } as const;

/** The figures the bars and the chart read of one policy's run; the rest does not matter here. */
function result(policy: string, ttft: { p50: number; p90: number; p99: number }, figures: { shed?: number; errors?: number } = {}): PolicyResult {
  const partial: Pick<PolicyResult, 'policy' | 'ttftMs' | 'shed' | 'errors' | 'errorExamples'> = { policy, ttftMs: { ...ttft, max: ttft.p99 }, shed: figures.shed ?? 0, errors: figures.errors ?? 0, errorExamples: [] };
  return partial as PolicyResult;
}

/** A short run where least-load came out behind round-robin: chance, in 5 s. */
const UNLUCKY = [result('round-robin', { p50: 40, p90: 200, p99: 400 }), result('least-load', { p50: 45, p90: 300, p99: 900 }), result('session', { p50: 60, p90: 700, p99: 1500 })];

describe('routing-quality bars', () => {
  it('leave the policy comparison unjudged in a quick run, which still passes on no failed requests', () => {
    const bars = judge(UNLUCKY);
    assert.equal(bars.pass(QUICK), true);
    const markdown = bars.markdown(QUICK);
    assert.match(markdown, /\| least-load p99 TTFT below round-robin's \| 900 vs 400 ms \| miss \(not judged in quick runs\) \|/);
    assert.match(markdown, /Verdict: \*\*PASS\*\* \(quick run: comparison bars not judged\)/);
  });

  it('judge it in a full run', () => {
    assert.equal(judge(UNLUCKY).pass(FULL), false);
    assert.deepEqual(failedBars(judge(UNLUCKY).markdown(FULL)), ["least-load p99 TTFT below round-robin's: 900 vs 400 ms"]);
  });

  it('fail a quick run on a failed request, and a full run where least-load sheds more', () => {
    assert.equal(judge([...UNLUCKY, result('p2c', { p50: 1, p90: 1, p99: 1 }, { errors: 1 })]).pass(QUICK), false);
    const shedding = judge([result('round-robin', { p50: 40, p90: 200, p99: 400 }), result('least-load', { p50: 30, p90: 100, p99: 200 }, { shed: 5 })]);
    assert.deepEqual(failedBars(shedding.markdown(FULL)), ['least-load sheds no more than round-robin: 5 vs 0 shed']);
  });
});

describe('routing-quality chart', () => {
  it('draws TTFT p50, p90 and p99 for every policy', () => {
    const chart = ttftChart(UNLUCKY);
    assert.equal(chart.name, 'ttft');
    assert.ok(chart.svg.startsWith('<svg '));
    for (const policy of ['round-robin', 'least-load', 'session']) assert.ok(chart.svg.includes(`>${policy}<`), policy);
    assert.match(chart.svg, /time to first token per policy/);
  });
});

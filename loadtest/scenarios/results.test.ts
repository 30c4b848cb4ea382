import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { Bars, failedBars, writeResults, type RunFacts } from './results.ts';

const FULL = { quick: false, smoke: false } as const;
const QUICK = { quick: true, smoke: false } as const;
const SMOKE = { quick: true, smoke: true } as const;

describe('failedBars', () => {
  const bars = new Bars();
  bars.check('correctness', 'zero 5xx | resets', true, '0');
  bars.check('correctness', 'engine queue ≤ 5', false, 'max 6/4/4');
  bars.check('performance', 'busy within 750 ms', false, 'never');

  it('names each failed bar with what it measured, and none that passed', () => {
    assert.deepEqual(failedBars(bars.markdown(FULL)), ['engine queue ≤ 5: max 6/4/4', 'busy within 750 ms: never']);
  });

  it('leaves out performance bars a smoke run does not judge', () => {
    assert.deepEqual(failedBars(bars.markdown(SMOKE)), ['engine queue ≤ 5: max 6/4/4']);
  });
});

describe('Bars', () => {
  /** A run whose only miss is a comparison of two policies. */
  function comparing(): Bars {
    const bars = new Bars();
    bars.check('correctness', 'no failed requests', true, '0 failed');
    bars.check('comparison', "least-load p99 TTFT below round-robin's", false, '900 vs 400 ms');
    return bars;
  }

  it('leaves comparison bars unjudged in quick and smoke runs, and says so in the verdict', () => {
    assert.equal(comparing().pass(QUICK), true);
    assert.equal(comparing().pass(SMOKE), true);
    const markdown = comparing().markdown(QUICK);
    assert.match(markdown, /\| least-load p99 TTFT below round-robin's \| 900 vs 400 ms \| miss \(not judged in quick runs\) \|/);
    assert.match(markdown, /Verdict: \*\*PASS\*\* \(quick run: comparison bars not judged\)/);
    assert.deepEqual(failedBars(markdown), []);
  });

  it('judges comparison bars in full runs', () => {
    assert.equal(comparing().pass(FULL), false);
    assert.deepEqual(failedBars(comparing().markdown(FULL)), ["least-load p99 TTFT below round-robin's: 900 vs 400 ms"]);
  });

  it('still judges performance bars in quick runs', () => {
    const bars = new Bars();
    bars.check('performance', '≥ 800 requests/s', false, '700 req/s');
    assert.equal(bars.pass(QUICK), false);
    assert.match(bars.markdown(QUICK), /Verdict: \*\*FAIL\*\*$/);
  });

  it('reports a bar the run left nothing to measure as n/a, failing no verdict', () => {
    const bars = new Bars();
    bars.notApplicable('performance', '≥ 267 requests/s sustained after the ramp', 'no whole second after the ramp');
    assert.equal(bars.pass(FULL), true);
    assert.match(bars.markdown(FULL), /\| ≥ 267 requests\/s sustained after the ramp \| no whole second after the ramp \| n\/a \|/);
  });
});

describe('writeResults', () => {
  const facts: RunFacts = { cpu: 'test', cores: 2, memoryGiB: 4, node: 'v24', commit: 'abc', date: '2026-12-06T20:00:00.000Z', command: 'npm run bench -- x' };

  /** The -latest.md a run in `mode` writes for the report `markdown`. */
  function written(mode: typeof FULL | typeof QUICK | typeof SMOKE, markdown: string): string {
    const out = mkdtempSync(join(tmpdir(), 'switchyard-results-'));
    const log = mock.method(console, 'log', () => {});
    try {
      writeResults({ out, ...mode }, 'example', facts, {}, markdown);
      return readFileSync(join(out, 'example-latest.md'), 'utf8');
    } finally {
      log.mock.restore();
      rmSync(out, { recursive: true, force: true });
    }
  }

  it('heads a quick run report with a plain note that it is indicative only', () => {
    const report = written(QUICK, 'Machine: test\n\nVerdict: **PASS**');
    assert.match(report, /^\*\*Quick run: indicative only\.\*\* It is too short to compare policies or judge the speed bars reliably/);
    assert.match(report, /Verdict: \*\*PASS\*\*\n$/);
  });

  it('heads a smoke run report with its own note, and leaves a full run report as it is', () => {
    assert.match(written(SMOKE, 'body'), /^\*\*Smoke run: correctness only\.\*\*/);
    assert.equal(written(FULL, 'body'), 'body\n');
  });
});

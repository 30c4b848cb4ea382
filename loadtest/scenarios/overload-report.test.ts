import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { overloadBars, type Check } from './overload-report.ts';
import { failedBars } from './results.ts';

const FULL = { quick: false, smoke: false } as const;
const SMOKE = { quick: true, smoke: true } as const;

const CHECKS: readonly Check[] = [
  { bar: 'no router-caused 5xx, no resets', measured: '0 5xx, 0 resets', pass: true, correctness: true },
  { bar: 'engine fast running ≥ 95% of its 16 slots', measured: 'mean 11.9 (74%)', pass: false },
];

describe('overload bars', () => {
  it('report the speed and load bars a smoke run misses as not judged, with a verdict that matches its exit code', () => {
    const bars = overloadBars(CHECKS);
    assert.equal(bars.pass(SMOKE), true);
    assert.match(bars.markdown(SMOKE), /\| engine fast running ≥ 95% of its 16 slots \| mean 11\.9 \(74%\) \| miss \(not judged in smoke runs\) \|/);
    assert.match(bars.markdown(SMOKE), /Verdict: \*\*PASS\*\* \(smoke run: correctness bars only\)/);
  });

  it('fail a full run on them, where `bench all` can list them', () => {
    assert.equal(overloadBars(CHECKS).pass(FULL), false);
    assert.deepEqual(failedBars(overloadBars(CHECKS).markdown(FULL)), ['engine fast running ≥ 95% of its 16 slots: mean 11.9 (74%)']);
  });

  it('fail a smoke run on a correctness bar', () => {
    assert.equal(overloadBars([{ ...CHECKS[0]!, pass: false }]).pass(SMOKE), false);
  });
});

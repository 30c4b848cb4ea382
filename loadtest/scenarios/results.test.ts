import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Bars, failedBars } from './results.ts';

describe('failedBars', () => {
  const bars = new Bars();
  bars.check('correctness', 'zero 5xx | resets', true, '0');
  bars.check('correctness', 'engine queue ≤ 5', false, 'max 6/4/4');
  bars.check('performance', 'busy within 750 ms', false, 'never');

  it('names each failed bar with what it measured, and none that passed', () => {
    assert.deepEqual(failedBars(bars.markdown(false)), ['engine queue ≤ 5: max 6/4/4', 'busy within 750 ms: never']);
  });

  it('leaves out performance bars a smoke run does not judge', () => {
    assert.deepEqual(failedBars(bars.markdown(true)), ['engine queue ≤ 5: max 6/4/4']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failedBars } from './results.ts';
import { integrityBars, plateauOf, sustainedBar, type IntegrityRun } from './tool-call-integrity.ts';

const FULL = { quick: false, smoke: false } as const;
const QUICK = { quick: true, smoke: false } as const;

/** A clean run: `timeline` valid responses per second, all of them checked. */
function cleanRun(timeline: readonly number[]): IntegrityRun {
  const ok = timeline.reduce((a, b) => a + b, 0);
  return { ok, measured: ok, failed: 0, shed: 0, failureKinds: {}, timeline: [...timeline], generatorBottleneck: undefined };
}

describe('tool-call-integrity bars', () => {
  it('hold --requests 3000 --rate 300 to the load asked for, so a clean run at that load passes', () => {
    // A 5 s ramp to 300/s, then 300/s until 3,000 were sent.
    const run = cleanRun([100, 140, 180, 220, 260, 298, 301, 299, 302, 300, 301, 299]);
    const bars = integrityBars(run, { requests: 3000, rate: 300, rampMs: 5000 });
    assert.deepEqual(failedBars(bars.markdown(QUICK)), []);
    assert.equal(bars.pass(QUICK), true);
    assert.deepEqual(
      bars.list.map((b) => b.name),
      ['zero malformed or interleaved payloads', 'zero other failures (resets, timeouts, 5xx, unexpected 429)', "≥ 3,000 requests checked (the issue's bar: 100,000)", "≥ 267 requests/s sustained after the ramp (8/9 of the ramp's 300 req/s; the issue's bar: 800 of 900)"],
    );
  });

  it("keep the issue's bars for its load, and fail a run that falls short of them", () => {
    const short = integrityBars(cleanRun([...Array.from({ length: 20 }, () => 450), ...Array.from({ length: 100 }, () => 700)]), { requests: 100_000, rate: 900, rampMs: 20_000 });
    assert.deepEqual(failedBars(short.markdown(FULL)), ['≥ 100,000 requests checked: 79000 valid of 79000', '≥ 800 requests/s sustained after the ramp: 700 req/s mean over 99 s (peak second 700)']);
  });

  it('say n/a for the throughput bar when no whole second follows the ramp', () => {
    const bars = integrityBars(cleanRun([100, 100, 100]), { requests: 300, rate: 100, rampMs: 2000 });
    const throughput = bars.list.at(-1);
    assert.equal(throughput?.applies, false);
    assert.match(bars.markdown(FULL), /\| n\/a \|$/m);
    assert.equal(bars.pass(FULL), true);
  });

  it('scale the throughput bar with the rate, 800 at 900', () => {
    assert.deepEqual([sustainedBar(900), sustainedBar(300), sustainedBar(400)], [800, 267, 356]);
    assert.deepEqual(plateauOf([1, 2, 3, 4, 5], 1000), { perS: 3, seconds: 3 });
  });
});

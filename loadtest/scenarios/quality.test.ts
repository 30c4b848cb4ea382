import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarizeQuality, type RequestRecord } from './quality.ts';
import { summarizeQueues } from './queue-sampler.ts';

const record = (index: number, sessionKey: string | undefined, engine: number, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  index,
  sessionKey,
  measured: true,
  ttftMs: 10 + index,
  sendLagMs: 0,
  error: undefined,
  shed: false,
  engine,
  ...extra,
});

describe('session hit ratio', () => {
  it("counts a keyed request as a hit when it went where the key's previous request went; first requests of a key do not count", () => {
    const summary = summarizeQuality(
      [record(0, 'a', 0), record(1, 'a', 0), record(2, 'b', 1), record(3, 'a', 2), record(4, 'b', 1), record(5, undefined, 3)],
      4,
    );
    // a: 0→0 hit, 0→2 miss; b: 1→1 hit.
    assert.equal(summary.sessionRepeats, 3);
    assert.equal(summary.sessionHits, 2);
    assert.equal(summary.servedShare[3], 1 / 6);
  });

  it('lets a warm-up request be the previous one without counting the warm-up request itself', () => {
    const summary = summarizeQuality([record(1, 'a', 2), record(0, 'a', 2, { measured: false })], 4);
    assert.deepEqual([summary.requests, summary.sessionRepeats, summary.sessionHits], [1, 1, 1]);
  });

  it('ignores requests no engine received, and counts failures as errors and 429s as shed, neither with a TTFT', () => {
    const summary = summarizeQuality(
      [record(0, 'a', 0), record(1, 'a', -1, { error: 'status 502', ttftMs: undefined }), record(2, 'a', 0), record(3, 'b', -1, { error: 'status 429', shed: true, ttftMs: undefined })],
      4,
    );
    assert.deepEqual([summary.errors, summary.shed, summary.sessionRepeats, summary.sessionHits], [1, 1, 1, 1]);
    assert.equal(summary.ttftMs.max, 12);
  });
});

describe('queue imbalance', () => {
  it('averages max/mean over samples with a queue and skips samples where no engine has one', () => {
    const summary = summarizeQueues(
      [
        [0, 0, 0, 0],
        [4, 0, 0, 0], // 4 / 1
        [2, 2, 2, 2], // 2 / 2
      ],
      4,
    );
    assert.equal(summary.imbalance, 2.5);
    assert.deepEqual([summary.samples, summary.samplesWithQueue], [3, 2]);
    assert.deepEqual(summary.maxWaiting, [4, 2, 2, 2]);
    assert.deepEqual(summary.meanWaiting, [2, 2 / 3, 2 / 3, 2 / 3]);
  });

  it('is NaN when no sample had a queue', () => {
    assert.ok(Number.isNaN(summarizeQueues([[0, 0]], 2).imbalance));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SlowBodyWatch, type WatchedBody } from './slow-body-watch.ts';

function body(startedAt: number): WatchedBody & { cut: number; received: number } {
  return {
    startedAt,
    received: 0,
    cut: 0,
    tooSlow() {
      this.cut++;
    },
  };
}

describe('slow body watch', () => {
  it('spares every body during the grace period, then cuts those below the minimum average rate, once', () => {
    let now = 0;
    const watch = new SlowBodyWatch({ minBytesPerSecond: 1_000, graceMs: 5_000 }, () => now);
    const slow = body(0);
    const steady = body(0);
    watch.watch(slow);
    watch.watch(steady);
    now = 5_000;
    watch.check();
    assert.equal(slow.cut, 0);
    now = 6_000;
    slow.received = 5_999; // just under 1,000 B/s over 6 s
    steady.received = 6_000;
    watch.check();
    assert.equal(slow.cut, 1);
    assert.equal(steady.cut, 0);
    now = 20_000;
    watch.check();
    assert.equal(slow.cut, 1, 'a cut body is forgotten');
    assert.equal(steady.cut, 1, 'the average rate counts: 6,000 B in 20 s is too slow');
    watch.forget(slow);
    watch.forget(steady);
  });

  it('watches nothing when the minimum rate is off', () => {
    let now = 0;
    const watch = new SlowBodyWatch({ minBytesPerSecond: 0, graceMs: 1 }, () => now);
    const idle = body(0);
    watch.watch(idle);
    now = 1_000_000;
    watch.check();
    assert.equal(idle.cut, 0);
  });
});

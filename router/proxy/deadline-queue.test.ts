import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeadlineQueue, type DeadlineClock } from './deadline-queue.ts';

/** A clock whose time moves only when the test says, and whose timers fire only then. */
class ManualClock implements DeadlineClock {
  time = 0;
  timers: { at: number; fire: () => void }[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(fire: () => void, ms: number): unknown {
    this.timers.push({ at: this.time + ms, fire });
    return undefined;
  }

  /** Moves to `time`, firing every timer due by then in order. */
  advance(to: number): void {
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (next === undefined || next.at > to) break;
      this.timers.shift();
      this.time = next.at;
      next.fire();
    }
    this.time = to;
  }
}

describe('DeadlineQueue', () => {
  it('expires each deadline once its duration has passed, in the order added', () => {
    const clock = new ManualClock();
    const queue = new DeadlineQueue(100, clock);
    const fired: string[] = [];
    queue.add(() => fired.push(`a@${clock.time}`));
    clock.advance(30);
    queue.add(() => fired.push(`b@${clock.time}`));
    clock.advance(99);
    assert.deepEqual(fired, []);
    clock.advance(100);
    assert.deepEqual(fired, ['a@100']);
    clock.advance(200);
    assert.deepEqual(fired, ['a@100', 'b@130']);
    assert.equal(queue.pending, 0);
  });

  it('never calls a cancelled deadline, and waits on the next live one behind it', () => {
    const clock = new ManualClock();
    const queue = new DeadlineQueue(100, clock);
    const fired: string[] = [];
    const a = queue.add(() => fired.push('a'));
    clock.advance(10);
    queue.add(() => fired.push(`b@${clock.time}`));
    a.cancel();
    a.cancel();
    assert.equal(queue.pending, 1);
    clock.advance(1000);
    assert.deepEqual(fired, ['b@110']);
  });

  it('arms one timer for many deadlines, not one each', () => {
    const clock = new ManualClock();
    const queue = new DeadlineQueue(100, clock);
    for (let i = 0; i < 1000; i++) queue.add(() => undefined).cancel();
    assert.equal(clock.timers.length, 1);
    clock.advance(100);
    // Everything was cancelled: nothing left to wait for.
    assert.equal(clock.timers.length, 0);
    queue.add(() => undefined);
    assert.equal(clock.timers.length, 1);
  });

  it('keeps memory to what is pending: cancelled entries are compacted away, live ones keep their order', () => {
    const clock = new ManualClock();
    const queue = new DeadlineQueue(100, clock);
    const fired: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      const deadline = queue.add(() => fired.push(i));
      if (i % 1000 !== 0) deadline.cancel();
    }
    assert.equal(queue.pending, 10);
    assert.ok(queue.held <= 2 * queue.pending + 64, `${queue.held} entries held for 10 pending`);
    clock.advance(100);
    assert.deepEqual(fired, [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000]);
  });

  it('takes deadlines added and cancelled by a callback while it expires others', () => {
    const clock = new ManualClock();
    const queue = new DeadlineQueue(100, clock);
    const fired: string[] = [];
    queue.add(() => {
      fired.push(`a@${clock.time}`);
      cancelledByA.cancel();
      queue.add(() => fired.push(`retry@${clock.time}`));
    });
    const cancelledByA = queue.add(() => fired.push('cancelled by a'));
    queue.add(() => fired.push('b'));
    clock.advance(100);
    assert.deepEqual(fired, ['a@100', 'b']);
    assert.equal(clock.timers.length, 1, 'one timer for the retry, not two');
    clock.advance(200);
    assert.deepEqual(fired, ['a@100', 'b', 'retry@200']);
  });

  it('keeps its timer for what is left when a callback throws', () => {
    const clock = new ManualClock();
    const queue = new DeadlineQueue(100, clock);
    const fired: string[] = [];
    queue.add(() => {
      throw new Error('boom');
    });
    clock.advance(50);
    queue.add(() => fired.push(`b@${clock.time}`));
    assert.throws(() => clock.advance(100), /boom/);
    clock.advance(150);
    assert.deepEqual(fired, ['b@150']);
  });

  it('fires on Node timers without holding the process open', async () => {
    const queue = new DeadlineQueue(20);
    const started = performance.now();
    const elapsed = await new Promise<number>((resolve) => queue.add(() => resolve(performance.now() - started)));
    assert.ok(elapsed >= 19, `fired after ${elapsed} ms`);
    // A cancelled deadline leaves an unref'd timer behind: the test runner would hang on a ref'd one.
    queue.add(() => assert.fail('cancelled')).cancel();
  });
});

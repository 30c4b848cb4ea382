import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Schedule } from '../scheduling/profile.ts';
import { WaitQueue } from './wait-queue.ts';

const saturated: Schedule<string> = { kind: 'saturated', candidates: ['e'] };

describe('wait queue', () => {
  it('admits waiters in priority order, first come first served within a priority, once capacity frees up', async () => {
    const queue = new WaitQueue<string>({ maxLength: 10, maxWaitMs: 5_000 });
    let free = 0;
    const order: string[] = [];
    const enqueue = (name: string, priority: 'high' | 'normal' | 'low') =>
      queue
        .wait(priority, () => (free > 0 ? (free--, { kind: 'admit', attempts: [name], outcome: 'least_load' }) : saturated), new AbortController().signal)
        .then(() => order.push(name));
    const all = [enqueue('n1', 'normal'), enqueue('l1', 'low'), enqueue('h1', 'high'), enqueue('n2', 'normal')];
    assert.equal(queue.length, 4);
    free = 2;
    queue.notify();
    free = 2;
    queue.notify();
    await Promise.all(all);
    assert.deepEqual(order, ['h1', 'n1', 'n2', 'l1']);
  });

  it('sheds a waiter whose wait expires, and one whose client leaves', async () => {
    const queue = new WaitQueue<string>({ maxLength: 10, maxWaitMs: 30 });
    assert.deepEqual(await queue.wait('normal', () => saturated, new AbortController().signal), { kind: 'expired' });
    const controller = new AbortController();
    const pending = queue.wait('normal', () => saturated, controller.signal);
    controller.abort();
    assert.deepEqual(await pending, { kind: 'gone' });
    assert.equal(queue.length, 0);
  });

  it('is bounded: a full queue turns newcomers away unless they outrank its newest lowest waiter', async () => {
    const queue = new WaitQueue<string>({ maxLength: 2, maxWaitMs: 200 });
    const signal = new AbortController().signal;
    const first = queue.wait('normal', () => saturated, signal);
    const second = queue.wait('normal', () => saturated, signal);
    assert.deepEqual(await queue.wait('normal', () => saturated, signal), { kind: 'full' }, 'no one to push out');
    assert.deepEqual(await queue.wait('low', () => saturated, signal), { kind: 'full' });
    const high = queue.wait('high', () => saturated, signal);
    assert.deepEqual(await second, { kind: 'full' }, 'the newest normal waiter made room for high');
    assert.equal(queue.length, 2);
    assert.deepEqual(await first, { kind: 'expired' });
    assert.deepEqual(await high, { kind: 'expired' });
  });

  it('counts the waiters a newcomer queues behind: its own priority and higher', async () => {
    const queue = new WaitQueue<string>({ maxLength: 10, maxWaitMs: 50 });
    const signal = new AbortController().signal;
    const waits = (['high', 'normal', 'normal', 'low'] as const).map((p) => queue.wait(p, () => saturated, signal));
    assert.deepEqual([queue.ahead('high'), queue.ahead('normal'), queue.ahead('low')], [1, 3, 4]);
    await Promise.all(waits);
  });

  it('decides each key once per pass while it stays saturated, and other keys still get their turn', async () => {
    const queue = new WaitQueue<string>({ maxLength: 100, maxWaitMs: 100 });
    const signal = new AbortController().signal;
    let decided = 0;
    const busyModel = () => (decided++, saturated);
    for (let i = 0; i < 50; i++) void queue.wait('normal', busyModel, signal, 'busy').catch(() => undefined);
    const other = queue.wait('normal', () => ({ kind: 'admit', attempts: ['free'], outcome: 'least_load' }), signal, 'free');
    queue.notify();
    assert.deepEqual(await other, { kind: 'admit', attempts: ['free'], outcome: 'least_load' });
    assert.equal(decided, 1, 'one of the 50 waiters of the saturated key was decided; the rest were skipped');
  });

  it('is off with no length', () => {
    assert.equal(new WaitQueue({ maxLength: 0, maxWaitMs: 1 }).enabled, false);
  });
});

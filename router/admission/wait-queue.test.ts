import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Schedule } from '../scheduling/profiles/profile.ts';
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

  it('rotates over tenants within a priority: one tenant\'s backlog does not stand before another\'s single waiter', async () => {
    const queue = new WaitQueue<string>({ maxLength: 100, maxWaitMs: 5_000 });
    let free = 0;
    const order: string[] = [];
    const enqueue = (name: string, tenant: string, priority: 'high' | 'normal' = 'normal') =>
      queue
        .wait(priority, () => (free > 0 ? (free--, { kind: 'admit', attempts: [name], outcome: 'least_load' }) : saturated), new AbortController().signal, undefined, tenant)
        .then(() => order.push(name));
    const all = ['a1', 'a2', 'a3', 'a4'].map((name) => enqueue(name, 'a'));
    all.push(enqueue('b1', 'b'), enqueue('b2', 'b'), enqueue('c1', 'c'), enqueue('h1', 'a', 'high'));
    assert.equal(queue.ahead('normal', 'b'), 1 + 3 + 2 + 1, 'h1, then a1-a3, b1-b2 and c1: rounds up to b\'s next');
    for (let i = 0; i < 8; i++) {
      free = 1;
      queue.notify();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(all);
    assert.deepEqual(order, ['h1', 'a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('puts a tenant arriving after others were served in the round being served, not behind their backlog', async () => {
    const queue = new WaitQueue<string>({ maxLength: 100, maxWaitMs: 5_000 });
    let free = 0;
    const order: string[] = [];
    const enqueue = (name: string, tenant: string) =>
      queue
        .wait('normal', () => (free > 0 ? (free--, { kind: 'admit', attempts: [name], outcome: 'least_load' }) : saturated), new AbortController().signal, undefined, tenant)
        .then(() => order.push(name));
    const all = Array.from({ length: 6 }, (_, i) => enqueue(`a${i + 1}`, 'a'));
    free = 1;
    queue.notify();
    await all[0];
    free = 1;
    queue.notify();
    await all[1];
    all.push(enqueue('b1', 'b'));
    for (let i = 0; i < 5; i++) {
      free = 1;
      queue.notify();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(all);
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'a3', 'a4', 'a5', 'a6'], 'b goes next: a3 is in the round after the one served');
  });

  it('keeps one tenant within its share of the queue while another waits, and makes a tenant that filled it alone give way', async () => {
    const queue = new WaitQueue<string>({ maxLength: 4, maxWaitMs: 200, tenantShare: 0.5 });
    const signal = new AbortController().signal;
    const wait = (tenant: string) => queue.wait('normal', () => saturated, signal, undefined, tenant);
    const a = [wait('a'), wait('a'), wait('a'), wait('a')];
    assert.equal(queue.length, 4, 'alone, a tenant may fill the queue');
    const b1 = wait('b');
    assert.deepEqual(await a[3], { kind: 'full' }, 'the newest waiter of the tenant over its share made room');
    const b2 = wait('b');
    assert.deepEqual(await a[2], { kind: 'full' });
    assert.deepEqual(await wait('b'), { kind: 'full' }, 'b now holds its share');
    assert.deepEqual(await wait('a'), { kind: 'full' }, 'a holds its share while b waits');
    assert.equal(queue.waitingOf('a'), 2);
    assert.equal(queue.waitingOf('b'), 2);
    for (const outcome of await Promise.all([a[0], a[1], b1, b2])) assert.deepEqual(outcome, { kind: 'expired' });
  });

  it('serves a single tenant (no API keys) first come first served', async () => {
    const queue = new WaitQueue<string>({ maxLength: 10, maxWaitMs: 5_000, tenantShare: 0.1 });
    let free = 0;
    const order: string[] = [];
    const all = ['x1', 'x2', 'x3'].map((name) =>
      queue.wait('normal', () => (free > 0 ? (free--, { kind: 'admit', attempts: [name], outcome: 'least_load' }) : saturated), new AbortController().signal).then(() => order.push(name)),
    );
    assert.equal(queue.length, 3, 'the share binds only while another tenant waits');
    free = 3;
    for (let i = 0; i < 3; i++) {
      queue.notify();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(all);
    assert.deepEqual(order, ['x1', 'x2', 'x3']);
  });

  it('is off with no length', () => {
    assert.equal(new WaitQueue({ maxLength: 0, maxWaitMs: 1 }).enabled, false);
  });
});

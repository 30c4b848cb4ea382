import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { EngineLora } from './engine-lora.ts';
import { goFloat, LoraInfoGauge } from './lora-info.ts';
import { LoraSlots } from './lora-slots.ts';
import { SeqScheduler } from './scheduler.ts';

describe('LoRA adapter slots', () => {
  it('counts a swap and charges its load to the requests that start before the weights are in', () => {
    let now = 1000;
    const slots = new LoraSlots({ capacity: 2, loadMs: 200, clock: () => now });
    assert.equal(slots.start('ko'), 200);
    now += 50;
    assert.equal(slots.start('ko'), 150, 'a second request during the load waits for the rest of it');
    now += 150;
    assert.equal(slots.start('ko'), 0);
    assert.equal(slots.swaps, 1);
    assert.equal(slots.running('ko'), 3);
  });

  it('evicts only an idle adapter, least recently used first, and never holds more than its capacity', () => {
    const slots = new LoraSlots({ capacity: 2, loadMs: 0, clock: () => 0 });
    slots.start('a');
    slots.start('b');
    assert.equal(slots.canStart('c'), false, 'both active adapters run requests');
    assert.throws(() => slots.start('c'));
    slots.finish('b');
    slots.finish('a'); // a is now the more recently used of the two idle adapters
    assert.equal(slots.canStart('c'), true);
    slots.start('c');
    assert.deepEqual(slots.active, ['a', 'c'], 'b, idle longest, made room');
    assert.equal(slots.swaps, 3);
  });

  it('keeps at most `capacity` adapters active and never evicts one under a running request (property)', () => {
    const adapters = ['a', 'b', 'c', 'd'];
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(fc.tuple(fc.boolean(), fc.constantFrom(...adapters)), { maxLength: 60 }), (capacity, steps) => {
        const slots = new LoraSlots({ capacity, loadMs: 0, clock: () => 0 });
        const running = new Map<string, number>();
        for (const [start, adapter] of steps) {
          if (start && slots.canStart(adapter)) {
            slots.start(adapter);
            running.set(adapter, (running.get(adapter) ?? 0) + 1);
          } else if (!start && (running.get(adapter) ?? 0) > 0) {
            slots.finish(adapter);
            running.set(adapter, (running.get(adapter) as number) - 1);
          }
          assert.ok(slots.active.length <= capacity);
          for (const [name, count] of running) if (count > 0) assert.ok(slots.active.includes(name), `${name} runs but was evicted`);
        }
      }),
    );
  });
});

describe('vllm:lora_requests_info label sets', () => {
  it('sets a new label set at each change, strictly later than the last, and keeps the old ones', () => {
    const gauge = new LoraInfoGauge(() => 1_788_626_454_631.877);
    assert.deepEqual(gauge.series.map((s) => [s.running, s.waiting]), [['', '']], 'set once at start, idle');
    gauge.set('ko', '');
    gauge.set('ko', ''); // no change: no new time
    gauge.set('', '');
    const [idle, busy] = gauge.series;
    assert.deepEqual([idle?.running, busy?.running], ['', 'ko'], 'a revisited set keeps its line, in order of first appearance');
    assert.ok((idle?.seconds ?? 0) > (busy?.seconds ?? Infinity), 'same wall-clock reading, still strictly later');
    assert.equal(gauge.current, idle);
  });

  it("writes values as prometheus_client's floatToGoString does", () => {
    assert.equal(goFloat(1788626454.6318772), '1.7886264546318772e+09');
    assert.equal(goFloat(1788626454), '1.788626454e+09');
    assert.equal(goFloat(3), '3.0');
    assert.equal(goFloat(0), '0.0');
  });
});

describe('the scheduler with adapter admissions', () => {
  it('skips a request whose adapter cannot start, keeps FIFO among the others, and starts it once an adapter goes idle', async () => {
    const lora = new EngineLora({ model: 'base', slots: 2, loadMs: 0, adapters: 'ko,json,sql' });
    const scheduler = new SeqScheduler();
    const never = new AbortController().signal;
    const started: string[] = [];
    const admit = (model: string) => {
      const admission = lora.admission(model);
      return scheduler.acquire(8, never, admission).then(() => {
        started.push(model);
        return admission;
      });
    };
    const ko = await admit('ko');
    const json = await admit('json');
    const sql = admit('sql');
    const koAgain = admit('ko');
    const base = admit('base');
    await Promise.resolve();
    await koAgain;
    await base;
    assert.deepEqual(started, ['ko', 'json', 'ko', 'base']);
    assert.equal(scheduler.waiting, 1);
    assert.deepEqual([lora.info.current.running, lora.info.current.waiting], ['ko,json', 'sql']);
    scheduler.release(8, json);
    await sql;
    assert.deepEqual(lora.slots.active, ['ko', 'sql']);
    assert.equal(lora.slots.swaps, 3);
    scheduler.release(8, ko);
  });
});

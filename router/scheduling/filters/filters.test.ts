import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ep } from '../../../tests/kit/scheduling-fixtures.ts';
import { keepPinned } from './response-pin.ts';
import { keepRoutable } from './routable.ts';
import { splitSaturated } from './saturation.ts';

const poolOf = (n: number) => Uint32Array.from({ length: n }, (_, i) => i);

describe('routable filter', () => {
  it('drops ejected candidates and keeps the order of the rest', () => {
    const candidates = [ep('a'), ep('b', 0, { ejected: true }), ep('c')];
    const pool = new Uint32Array(3);
    const n = keepRoutable(candidates, pool);
    assert.deepEqual([...pool.subarray(0, n)], [0, 2]);
  });
  it('keeps every candidate when all are ejected', () => {
    const candidates = [ep('a', 0, { ejected: true }), ep('b', 0, { ejected: true })];
    const pool = new Uint32Array(2);
    assert.equal(keepRoutable(candidates, pool), 2);
    assert.deepEqual([...pool], [0, 1]);
  });
});

describe('response pin filter', () => {
  it('keeps only the engine that stored the previous response', () => {
    const pool = poolOf(3);
    assert.equal(keepPinned([ep('a'), ep('b'), ep('c')], 'c', pool, 3), 1);
    assert.equal(pool[0], 2);
  });
  it('keeps everyone when the pinned engine is not a candidate or there is no pin', () => {
    assert.equal(keepPinned([ep('a'), ep('b')], 'gone', poolOf(2), 2), 2);
    assert.equal(keepPinned([ep('a'), ep('b')], undefined, poolOf(2), 2), 2);
  });
});

describe('saturation filter', () => {
  it('moves saturated candidates to the overflow, both in order', () => {
    const candidates = [ep('a', 0, { estimatedWaiting: 9 }), ep('b'), ep('c', 0, { estimatedWaiting: 9 }), ep('d')];
    const pool = poolOf(4);
    const overflow = new Uint32Array(4);
    const kept = splitSaturated(candidates, (c) => c.estimatedWaiting > 4, pool, 4, overflow);
    assert.equal(kept, 2);
    assert.deepEqual([...pool.subarray(0, 2)], [1, 3]);
    assert.deepEqual([...overflow.subarray(0, 2)], [0, 2]);
  });
});

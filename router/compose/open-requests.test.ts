import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OpenRequests } from './open-requests.ts';

describe('OpenRequests', () => {
  it('counts requests open and wakes the queue each time one closes, not when one opens', () => {
    let wakes = 0;
    const open = new OpenRequests({ notify: () => wakes++ });
    open.increment();
    open.increment();
    assert.equal(open.count, 2);
    assert.equal(wakes, 0);
    open.decrement();
    assert.equal(open.count, 1);
    assert.equal(wakes, 1);
    open.decrement();
    assert.equal(open.count, 0);
    assert.equal(wakes, 2);
  });
});

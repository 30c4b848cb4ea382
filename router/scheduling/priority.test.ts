import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestPriority } from './priority.ts';

describe('request priority', () => {
  it('takes the header from a trusted proxy', () => {
    assert.equal(requestPriority('high', true), 'high');
    assert.equal(requestPriority('low', true), 'low');
    assert.equal(requestPriority(undefined, true), 'normal');
  });

  it('ignores the header from any other client', () => {
    assert.equal(requestPriority('high', false), 'normal');
    assert.equal(requestPriority('low', false), 'normal');
    assert.equal(requestPriority(['high', 'high'], false), 'normal');
  });
});

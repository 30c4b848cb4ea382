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

  it('runs an API key\'s requests at its priority class unless a trusted proxy sends the header', () => {
    assert.equal(requestPriority('high', false, 'low'), 'low', 'an untrusted header cannot lift a low key');
    assert.equal(requestPriority(undefined, false, 'high'), 'high');
    assert.equal(requestPriority(undefined, true, 'low'), 'low', 'a trusted proxy that sends no header leaves the key\'s class');
    assert.equal(requestPriority('normal', true, 'low'), 'normal', 'a trusted proxy\'s header decides');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closest, editDistance } from './did-you-mean.ts';

describe('did you mean', () => {
  it('counts a transposition as one edit and ignores case', () => {
    assert.equal(editDistance('queueLenght', 'queueLength'), 1);
    assert.equal(editDistance('intervalMS', 'intervalMs'), 0);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
  });

  it('suggests only a near candidate', () => {
    assert.equal(closest('polcy', ['policy', 'profiles']), 'policy');
    assert.equal(closest('zzz', ['policy', 'profiles']), undefined);
    assert.equal(closest('anything', []), undefined);
    assert.equal(closest('listen_port', ['listen', 'adminListen']), 'listen');
  });
});

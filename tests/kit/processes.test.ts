import assert from 'node:assert/strict';
import { getPriority } from 'node:os';
import { describe, it } from 'node:test';
import { deprioritiseSelf } from './processes.ts';

describe('deprioritiseSelf', () => {
  it('lowers this process to nice 10 and gives back what puts the priority it had back', { skip: process.getuid?.() !== 0 ? 'raising the priority back needs root' : false }, () => {
    const before = getPriority();
    const restore = deprioritiseSelf();
    try {
      assert.equal(getPriority(), 10);
    } finally {
      restore();
    }
    assert.equal(getPriority(), before);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReplicaCount } from './replica-count.ts';

describe('the replica count', () => {
  it('is the configured count until counted, then the counted one; never below this replica itself', () => {
    const count = new ReplicaCount(10);
    assert.deepEqual([count.value, count.source], [10, 'config']);
    count.counted(3);
    assert.deepEqual([count.value, count.source], [3, 'service']);
    // The Service lists no pod yet (this one is starting): it still counts itself.
    count.counted(0);
    assert.equal(count.value, 1);
    const unknown = new ReplicaCount();
    assert.deepEqual([unknown.value, unknown.source], [undefined, 'unknown']);
  });
});

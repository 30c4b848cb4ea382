import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { installProcessNet } from './process-net.ts';

describe('installProcessNet', () => {
  it('reports unhandled rejections and uncaught exceptions by kind, and removes itself', () => {
    const target = new EventEmitter();
    const seen: string[] = [];
    const remove = installProcessNet((kind, err) => seen.push(`${kind}: ${(err as Error).message}`), target as unknown as NodeJS.Process);
    target.emit('unhandledRejection', new Error('a nil fleet reply'), Promise.resolve());
    target.emit('uncaughtException', new Error('a listener threw'));
    assert.deepEqual(seen, ['unhandled_rejection: a nil fleet reply', 'uncaught_exception: a listener threw']);
    remove();
    assert.equal(target.listenerCount('unhandledRejection') + target.listenerCount('uncaughtException'), 0);
  });
});

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger, untilBroken } from './log.ts';

/** A stream whose reader went away: every write fails with EPIPE, as a pipe into an exited process does. */
function brokenPipe(): Writable & { attempts: number } {
  const stream = new Writable({
    write(_chunk, _encoding, done) {
      stream.attempts++;
      done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    },
  }) as Writable & { attempts: number };
  stream.attempts = 0;
  return stream;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('log output', () => {
  it('stops writing once a write failed, and the failure reaches no one', async () => {
    const stream = brokenPipe();
    const logger = createLogger('info', stream);
    logger.info('first');
    // The failure is an 'error' event; unheard it would be an uncaught exception, failing this test.
    await tick();
    for (let i = 0; i < 100; i++) logger.error('after the reader went away');
    await tick();
    assert.equal(stream.attempts, 1);
  });

  it('writes every line while the stream works', () => {
    const lines: string[] = [];
    const out = untilBroken(new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }));
    out.write('a\n');
    out.write('b\n');
    assert.deepEqual(lines, ['a\n', 'b\n']);
  });
});

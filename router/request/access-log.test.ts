import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { AccessLog, type AccessRecord } from './access-log.ts';

function collect(format: 'off' | 'json' | 'text', record: AccessRecord): string[] {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  new AccessLog(format, out).write(record);
  return chunks.join('').split('\n').filter((line) => line !== '');
}

const RECORD: AccessRecord = { requestId: 'r-1', route: '/v1/chat/completions', model: 'llama-3', tenant: 'team-a', endpoint: 'ns/vllm-0', status: 200, queueMs: 0.04, ttfbMs: 12.345, durationMs: 80.06, bytes: 512 };

describe('access log lines', () => {
  it('json: one object a line, fixed keys, absent fields left out, times to 0.1 ms', () => {
    const [line, ...rest] = collect('json', RECORD);
    assert.equal(rest.length, 0);
    const parsed = JSON.parse(line ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), ['time', 'log', 'requestId', 'route', 'model', 'tenant', 'endpoint', 'status', 'queueMs', 'ttfbMs', 'durationMs', 'bytes']);
    assert.deepEqual([parsed['queueMs'], parsed['ttfbMs'], parsed['durationMs']], [0, 12.3, 80.1]);
  });

  it('text: a client-chosen model name with spaces, quotes or newlines is quoted, so it cannot split or forge a line', () => {
    const forged = 'x\n2026-01-01T00:00:00.000Z 200 /v1/chat/completions model=y id=forged';
    const lines = collect('text', { ...RECORD, model: forged, tenant: undefined, endpoint: undefined });
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', / 200 \/v1\/chat\/completions model="x\\n2026-01-01T00:00:00\.000Z 200 \/v1\/chat\/completions model=y id=forged" queue=0ms ttfb=12\.3ms dur=80\.1ms bytes=512 id=r-1$/);
    assert.match(collect('text', { ...RECORD, model: 'a"b' })[0] ?? '', /model="a\\"b"/);
  });

  it('off writes nothing', () => {
    assert.deepEqual(collect('off', RECORD), []);
  });

  it('stops writing once its reader went away, without an unheard error', async () => {
    let attempts = 0;
    const gone = new Writable({
      write(_chunk, _encoding, done) {
        attempts++;
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const log = new AccessLog('json', gone);
    log.write(RECORD);
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 50; i++) log.write(RECORD);
    assert.equal(attempts, 1);
  });
});

describe('access log as a request hook', () => {
  it("writes a request's line when it is over, and wants records only when on", () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = new AccessLog('text', out);
    assert.equal(log.wantsRecord(), true);
    log.over(RECORD);
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', / 200 \/v1\/chat\/completions model=llama-3 .* id=r-1\n$/);
    assert.equal(new AccessLog('off', out).wantsRecord(), false);
  });
});

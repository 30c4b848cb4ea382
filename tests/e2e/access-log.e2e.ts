/**
 * Every request can be found: the access log (one line per request once it is over), the request
 * id it shares with the response, the engine and the warning about the same request, and the
 * optional header naming the endpoint that answered (never its address). A real router over real engine simulators;
 * the access log and the process log are collected from the streams the router writes to.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../router/log.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startInProcessRouter, waitFor, type RawResponse, type StartedRouter } from '../kit/harness.ts';

/** Lines written to a stream, as text. */
class Lines extends Writable {
  readonly lines: string[] = [];
  #partial = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    const parts = (this.#partial + chunk.toString('utf8')).split('\n');
    this.#partial = parts.pop() ?? '';
    this.lines.push(...parts);
    done();
  }
  json(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

const MODEL = 'logged';
const chat = (base: string, headers: Record<string, string> = {}, stream = false): Promise<RawResponse> =>
  postJson(`${base}/v1/chat/completions`, { model: MODEL, stream, messages: [{ role: 'user', content: 'hi' }] }, headers);

describe('access log (json), request ids and the endpoint header', () => {
  let engine: EngineSimulator;
  let router: StartedRouter;
  const access = new Lines();
  const log = new Lines();

  before(async () => {
    engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 1, outputTokens: 4 } });
    await engine.listen();
    router = await startInProcessRouter(
      ['--backend', engine.url, '--access-log', 'json', '--server-endpoint-header', 'x-switchyard-endpoint', '--upstream-retry', 'false'],
      1,
      { logger: createLogger('info', log), accessLogOut: access },
    );
  });
  after(async () => {
    await router?.router.close();
    await engine?.close();
  });

  /** The access line of `requestId`, once written. */
  const accessLine = async (requestId: string) => {
    await waitFor(() => access.json().some((l) => l['requestId'] === requestId));
    return access.json().find((l) => l['requestId'] === requestId) as Record<string, unknown>;
  };

  it('one line per request: id, model, endpoint, status, timings, bytes; never a prompt or key', async () => {
    const response = await chat(router.base, { 'x-request-id': 'req-ok-1', authorization: 'Bearer sk-not-logged' }, true);
    assert.equal(response.status, 200);
    assert.equal(response.headers['x-switchyard-endpoint'], 'static-0', 'the endpoint header names the backend, not its URL');
    const line = await accessLine('req-ok-1');
    assert.deepEqual(
      { log: line['log'], route: line['route'], model: line['model'], endpoint: line['endpoint'], status: line['status'], bytes: line['bytes'] },
      { log: 'access', route: '/v1/chat/completions', model: MODEL, endpoint: engine.url, status: 200, bytes: response.body.length },
    );
    for (const field of ['queueMs', 'ttfbMs', 'durationMs']) assert.equal(typeof line[field], 'number', field);
    assert.ok((line['ttfbMs'] as number) <= (line['durationMs'] as number));
    const text = access.lines.join('\n');
    assert.ok(!text.includes('sk-not-logged') && !text.includes('"hi"'), 'no key, no prompt');
  });

  it('a client request id outside [A-Za-z0-9._:-]{1,128} is replaced by a generated one, in the response and the log alike', async () => {
    for (const odd of ['has space', 'quote"d', 'x'.repeat(129)]) {
      const response = await chat(router.base, { 'x-request-id': odd });
      const id = String(response.headers['x-request-id']);
      assert.match(id, /^[0-9a-f-]{36}$/, `${odd} replaced`);
      await accessLine(id);
      assert.ok(!access.lines.some((l) => l.includes(odd)), 'the odd id is never logged');
    }
  });

  it('an engine failure: the access line and the warning carry the same request id', async () => {
    const response = await chat(router.base, { 'x-request-id': 'req-cut-1', 'x-sim-die-after-chunks': '1' }, true);
    assert.equal(response.status, 200, 'the stream had started');
    const line = await accessLine('req-cut-1');
    assert.equal(line['reason'], 'upstream_midstream');
    await waitFor(() => log.json().some((l) => l['requestId'] === 'req-cut-1'));
    const warning = log.json().find((l) => l['requestId'] === 'req-cut-1');
    assert.deepEqual({ level: warning?.['level'], msg: warning?.['msg'], endpoint: warning?.['endpoint'] }, { level: 40, msg: 'an engine failure reached the client', endpoint: engine.url });
  });

  it("the router's own answers are logged with their reason: an unknown model", async () => {
    const response = await postJson(`${router.base}/v1/chat/completions`, { model: 'nope', messages: [{ role: 'user', content: 'hi' }] }, { 'x-request-id': 'req-404' });
    assert.equal(response.status, 404);
    const line = await accessLine('req-404');
    assert.deepEqual({ status: line['status'], reason: line['reason'], endpoint: line['endpoint'] }, { status: 404, reason: 'SWITCHYARD_MODEL_NOT_FOUND', endpoint: undefined });
  });
});

describe('access log (text) and off', () => {
  it('text: one readable line per request; off: nothing is written', async () => {
    const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 2 } });
    await engine.listen();
    const text = new Lines();
    const off = new Lines();
    const routers = [
      await startInProcessRouter(['--backend', engine.url, '--access-log', 'text'], 1, { accessLogOut: text }),
      await startInProcessRouter(['--backend', engine.url], 1, { accessLogOut: off }),
    ];
    try {
      for (const r of routers) assert.equal((await chat(r.base, { 'x-request-id': 'req-text' })).status, 200);
      await waitFor(() => text.lines.length === 1);
      assert.match(text.lines[0] ?? '', /^\d{4}-\d\d-\d\dT[\d:.]+Z 200 \/v1\/chat\/completions model=logged endpoint=\S+ queue=[\d.]+ms ttfb=[\d.]+ms dur=[\d.]+ms bytes=\d+ id=req-text$/);
      assert.deepEqual(off.lines, []);
    } finally {
      await Promise.all(routers.map((r) => r.router.close()));
      await engine.close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { scanEngineMetrics } from '../../../router/load/exposition-scanner.ts';
import { checkJsonResponse } from '../../bench/response-check.ts';
import type { Nginx } from './nginx.ts';
import { startStaticEngine } from './static-engine.ts';

describe('the static engine (nginx answering at once)', () => {
  let engine: Nginx | undefined;
  before(async () => {
    engine = await startStaticEngine({ model: 'static-model', maxConnections: 64 });
  });
  after(() => engine?.stop());
  const url = () => (engine as Nginx).url;

  it("answers a chat completion the load generator accepts, with the request's id in its own", async () => {
    for (const id of ['run-1', 'switchyard-h3-1234']) {
      const res = await fetch(`${url()}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: JSON.stringify({ model: 'static-model', messages: [{ role: 'user', content: 'hi' }] }) });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const body = await res.text();
      assert.equal(checkJsonResponse(body, { toolCall: false, idSuffix: id }), undefined, body);
      const parsed = JSON.parse(body) as { id: string; model: string; choices: { message: { content: string } }[] };
      assert.equal(parsed.id, `chatcmpl-${id}`);
      assert.equal(parsed.model, 'static-model');
      assert.match(parsed.choices[0]?.message.content ?? '', /日本語 token 🚀/);
    }
  });

  it('lists its model, answers the health check and shows an idle engine to the router', async () => {
    assert.equal((await fetch(`${url()}/health`)).status, 200);
    const models = (await (await fetch(`${url()}/v1/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(models.data.map((m) => m.id), ['static-model']);
    const scan = scanEngineMetrics(await (await fetch(`${url()}/metrics`)).text());
    assert.ok(scan.ok, JSON.stringify(scan));
    const gauges = scan.models.get('static-model');
    assert.equal(gauges?.waiting, 0);
    assert.equal(gauges?.running, 0);
  });

  it('answers 404 to anything else', async () => {
    assert.equal((await fetch(`${url()}/v1/completions`, { method: 'POST', body: '{}' })).status, 404);
  });
});

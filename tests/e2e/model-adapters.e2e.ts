/**
 * LoRA adapters end to end: an engine that answers `/v1/models` as vLLM does
 * with adapters loaded (each adapter's `parent` is its base model) is probed
 * by a real router, whose own `/v1/models` then lists the adapters with their
 * parent, and whose `/debug/endpoints` shows what the probe learnt.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { send, startInProcessRouter, type StartedRouter } from '../kit/harness.ts';

/** vLLM's answer with `--enable-lora --lora-modules sql-lora=/adapters/sql chat-lora=/adapters/chat`. */
const ENGINE_MODELS = JSON.stringify({
  object: 'list',
  data: [
    { id: 'llama-3-8b', object: 'model', created: 0, owned_by: 'vllm', root: '/models/llama-3-8b', parent: null, max_model_len: 8192 },
    { id: 'sql-lora', object: 'model', created: 0, owned_by: 'vllm', root: '/adapters/sql', parent: 'llama-3-8b', max_model_len: 8192 },
    { id: 'chat-lora', object: 'model', created: 0, owned_by: 'vllm', root: '/adapters/chat', parent: 'llama-3-8b', max_model_len: 8192 },
  ],
});

describe('LoRA adapters in the model list', () => {
  let engine: Server;
  let router: StartedRouter;

  before(async () => {
    // A stand-in: only /v1/models matters here (metrics answer 404, so the router routes on its own counts).
    engine = createServer((req, res) => {
      if (req.url !== '/v1/models') res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(ENGINE_MODELS);
    });
    await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
    router = await startInProcessRouter(['--backend', `http://127.0.0.1:${(engine.address() as AddressInfo).port}`], 1);
  });

  after(async () => {
    await router?.router.close();
    await new Promise((resolve) => engine?.close(resolve));
  });

  it('lists each adapter with its base model as parent', async () => {
    const models = JSON.parse((await send(`${router.base}/v1/models`, { method: 'GET' })).body.toString('utf8')) as { data: { id: string; parent: string | null; root?: unknown }[] };
    assert.deepEqual(
      models.data.map((m) => [m.id, m.parent]),
      [
        ['chat-lora', 'llama-3-8b'],
        ['llama-3-8b', null],
        ['sql-lora', 'llama-3-8b'],
      ],
    );
    assert.ok(models.data.every((m) => m.root === undefined), "the engine's adapter paths stay inside");
  });

  it('shows the adapters the probe learnt in /debug/endpoints', async () => {
    const debug = (await (await fetch(`${router.admin}/debug/endpoints`)).json()) as { endpoints: { health: { modelProbe: { adapters?: Record<string, string> } | null } }[] };
    assert.deepEqual(debug.endpoints[0]?.health.modelProbe?.adapters, { 'chat-lora': 'llama-3-8b', 'sql-lora': 'llama-3-8b' });
  });
});

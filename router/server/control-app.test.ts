import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint } from '../../discovery/endpoint.ts';
import { LoadView } from '../load/load-view.ts';
import { createControlApp } from './control-app.ts';

const endpoint = (id: string, models: string[], adapters?: [string, string][]): Endpoint => ({
  id,
  url: `http://127.0.0.1:${9000 + id.length}`,
  models,
  labels: {},
  ready: true,
  draining: false,
  ...(adapters === undefined ? {} : { adapters: new Map(adapters) }),
});

describe('control app', () => {
  it('lists each adapter with its base model as parent, every other model with parent null', async () => {
    const view = new LoadView({ maxScrapeAgeMs: 3_000, defaultCapacity: 256, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 0.5 } });
    view.update({
      version: 1,
      endpoints: [
        // A vLLM engine with two adapters, one mid-rollout to a new base on another engine, and an engine named by a label.
        endpoint('a', ['llama', 'sql-lora', 'chat-lora'], [['sql-lora', 'llama'], ['chat-lora', 'llama']]),
        endpoint('bb', ['llama-v2', 'sql-lora'], [['sql-lora', 'llama-v2']]),
        endpoint('ccc', ['mistral']),
      ],
    });
    const app = createControlApp({
      routableModels: () => view.routableModels(),
      adapterParent: (model) => view.adapterParent(model),
      readiness: () => ({ discoverySynced: true, draining: false, sharedState: 'off' }),
      startedAtS: 1_700_000_000,
    });
    const response = await app.request('/v1/models');
    assert.equal(response.status, 200);
    const entry = (id: string, parent: string | null) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'switchyard', parent });
    assert.deepEqual(await response.json(), {
      object: 'list',
      data: [entry('chat-lora', 'llama'), entry('llama', null), entry('llama-v2', null), entry('mistral', null), entry('sql-lora', 'llama')],
    });
  });
});

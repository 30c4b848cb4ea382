import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent } from 'undici';
import { MAX_FIELD_BYTES } from '../router/request/json-body-scanner.ts';
import { MAX_PARENT_JSON_BYTES, ModelProbe, httpModelFetcher, parseModelList, type ProbedModel } from './model-probe.ts';
import { StaticEndpointSource } from './static-source.ts';
import type { Endpoint, EndpointSet, EndpointSource } from './endpoint.ts';

/** Base models only, as a fetcher answers. */
const ids = (...names: string[]): ProbedModel[] => names.map((id) => ({ id }));

/** What vLLM serving a base model with two LoRA adapters answers, plus entries whose parent must not count. */
const VLLM_MODELS = {
  object: 'list',
  data: [
    { id: 'llama-3-8b', object: 'model', owned_by: 'vllm', root: '/models/llama-3-8b', parent: null },
    { id: 'sql-lora', object: 'model', owned_by: 'vllm', root: '/adapters/sql', parent: 'llama-3-8b' },
    { id: 'chat-lora', object: 'model', owned_by: 'vllm', root: '/adapters/chat', parent: 'llama-3-8b' },
    { id: 'no-parent-field', object: 'model' },
    { id: 'numeric-parent', parent: 7 },
    { id: 'object-parent', parent: { id: 'llama-3-8b' } },
    { id: 'empty-parent', parent: '' },
    { id: 'own-parent', parent: 'own-parent' },
    { id: 'long-parent', parent: 'p'.repeat(MAX_PARENT_JSON_BYTES - 1) }, // 2 quotes over the cap
    { id: 'longest-parent', parent: 'p'.repeat(MAX_PARENT_JSON_BYTES - 2) },
    { id: '__proto__', parent: 'llama-3-8b' },
  ],
};

function waitFor(condition: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 2_000;
    const tick = () => (condition() ? resolve() : Date.now() > deadline ? reject(new Error('timeout')) : setTimeout(tick, 5));
    tick();
  });
}

describe('model probe', () => {
  it('keeps an endpoint unroutable until its models are known, retrying failures', async () => {
    let calls = 0;
    const probe = new ModelProbe(
      new StaticEndpointSource(['http://127.0.0.1:1/', 'http://127.0.0.1:2']),
      (url) => {
        calls++;
        if (url.endsWith(':2') && calls < 4) return Promise.reject(new Error('connection refused'));
        return Promise.resolve(url.endsWith(':1') ? ids('b', 'a') : ids('c'));
      },
      { intervalMs: 60_000, retryMs: 10 },
    );
    const sets: EndpointSet[] = [];
    probe.start((set) => sets.push(set));
    assert.deepEqual(sets[0]?.endpoints.map((e) => e.models), [undefined, undefined], 'first set at once, models unknown');
    await waitFor(() => sets.at(-1)?.endpoints.every((e) => e.models !== undefined) ?? false);
    assert.deepEqual(sets.at(-1)?.endpoints.map((e) => e.models), [['a', 'b'], ['c']]);
    assert.ok(sets.every((s, i) => i === 0 || s.version > (sets[i - 1]?.version ?? 0)), 'versions increase');
    assert.equal(probe.status('http://127.0.0.1:2')?.lastError, undefined);
    await probe.stop();
  });

  it('keeps the last known models when a refresh fails', async () => {
    let fail = false;
    const probe = new ModelProbe(
      new StaticEndpointSource(['http://127.0.0.1:3']),
      () => (fail ? Promise.reject(new Error('down')) : Promise.resolve(ids('m'))),
      { intervalMs: 10, retryMs: 10 },
    );
    const sets: EndpointSet[] = [];
    probe.start((set) => sets.push(set));
    await waitFor(() => sets.at(-1)?.endpoints[0]?.models !== undefined);
    fail = true;
    await waitFor(() => probe.status('http://127.0.0.1:3')?.lastError === 'down');
    assert.deepEqual(sets.at(-1)?.endpoints[0]?.models, ['m']);
    await probe.stop();
  });

  it("asks each endpoint as its own source, so one source's answer never fills in another's", async () => {
    const asked: string[] = [];
    const url = 'http://127.0.0.1:4';
    const base = { url, models: undefined, labels: {}, ready: true, draining: false };
    // The same address reached through two sources (e.g. a static URL and a pod with that IP).
    const source: EndpointSource = {
      start: (listener) => listener({ version: 1, endpoints: [{ ...base, id: 'a', source: 'static' }, { ...base, id: 'b', source: 'team-b' }] }),
      stop: () => Promise.resolve(),
    };
    const probe = new ModelProbe(
      source,
      (baseUrl, from) => {
        asked.push(`${String(from)} ${baseUrl}`);
        return Promise.resolve(ids(`${String(from)}-model`));
      },
      { intervalMs: 60_000, retryMs: 10 },
    );
    const sets: EndpointSet[] = [];
    probe.start((set) => sets.push(set));
    await waitFor(() => sets.at(-1)?.endpoints.every((e) => e.models !== undefined) ?? false);
    assert.deepEqual(asked.sort(), [`static ${url}`, `team-b ${url}`]);
    assert.deepEqual(sets.at(-1)?.endpoints.map((e) => [e.id, e.models]), [['a', ['static-model']], ['b', ['team-b-model']]]);
    assert.deepEqual(probe.status(url, 'team-b')?.models, ['team-b-model']);
    assert.equal(probe.status(url), undefined, 'keyed by source too');
    await probe.stop();
  });

  it('parses OpenAI model lists and rejects other shapes', () => {
    assert.deepEqual(parseModelList('{"object":"list","data":[{"id":"a"},{"id":""},{"x":1},null,7,{"id":"b"}]}'), ids('a', 'b'));
    assert.throws(() => parseModelList('{"models":[]}'));
    assert.throws(() => parseModelList('not json'));
  });

  it('keeps a parent only when it is a non-empty string other than the id, no longer than a model id', () => {
    const parsed = parseModelList(JSON.stringify(VLLM_MODELS));
    assert.deepEqual(parsed.map((m) => m.id), VLLM_MODELS.data.map((m) => m.id), 'every model kept, in order');
    assert.deepEqual(Object.fromEntries(parsed.filter((m) => m.parent !== undefined).map((m) => [m.id, m.parent])), {
      'sql-lora': 'llama-3-8b',
      'chat-lora': 'llama-3-8b',
      'longest-parent': 'p'.repeat(MAX_PARENT_JSON_BYTES - 2),
      ['__proto__']: 'llama-3-8b',
    });
    assert.equal(MAX_PARENT_JSON_BYTES, MAX_FIELD_BYTES, 'the cap on a request `model`: a longer parent names no model a client can ask for');
  });

  it('fetches parents over HTTP and sets adapters on the endpoint, the status and nowhere else', async () => {
    let answer: unknown = VLLM_MODELS;
    const engine = createServer((req, res) => {
      res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(engine.address() as AddressInfo).port}`;
    const agent = new Agent();
    const labelled: Endpoint = { id: 'labelled', url: 'http://127.0.0.1:9', models: ['sql-lora'], labels: {}, ready: true, draining: false };
    const source: EndpointSource = {
      start: (listener) => listener({ version: 1, endpoints: [{ id: 'probed', url, models: undefined, labels: {}, ready: true, draining: false }, labelled] }),
      stop: () => Promise.resolve(),
    };
    const probe = new ModelProbe(source, httpModelFetcher(agent, 2_000), { intervalMs: 10, retryMs: 10 });
    const sets: EndpointSet[] = [];
    probe.start((set) => sets.push(set));
    try {
      await waitFor(() => sets.at(-1)?.endpoints[0]?.models !== undefined);
      const [probed, fromLabel] = sets.at(-1)?.endpoints ?? [];
      assert.deepEqual(probed?.models, [...VLLM_MODELS.data.map((m) => m.id)].sort());
      assert.deepEqual(probed?.adapters, new Map([['__proto__', 'llama-3-8b'], ['chat-lora', 'llama-3-8b'], ['longest-parent', 'p'.repeat(MAX_PARENT_JSON_BYTES - 2)], ['sql-lora', 'llama-3-8b']]));
      assert.equal(fromLabel, labelled, 'models from a label: the endpoint as its source gave it, no adapters');
      const shown = JSON.parse(JSON.stringify(probe.status(url))) as { adapters?: Record<string, string> };
      assert.equal(shown.adapters?.['sql-lora'], 'llama-3-8b', '/debug/endpoints shows them');
      assert.equal(Object.keys(shown.adapters ?? {}).includes('__proto__'), true, 'an adapter named __proto__ too');

      // Same ids, one parent changed: a new set. Then no adapter at all: the field goes.
      const before = sets.length;
      answer = { data: [{ id: 'llama-3-8b', parent: null }, { id: 'sql-lora', parent: 'llama-3-70b' }] };
      await waitFor(() => sets.at(-1)?.endpoints[0]?.adapters?.get('sql-lora') === 'llama-3-70b');
      assert.ok(sets.length > before);
      answer = { data: [{ id: 'llama-3-8b', parent: null }, { id: 'sql-lora', parent: null }] };
      await waitFor(() => sets.at(-1)?.endpoints[0]?.adapters === undefined);
      assert.equal('adapters' in (sets.at(-1)?.endpoints[0] ?? {}), false, 'absent, not undefined');
      assert.equal(probe.status(url)?.adapters, undefined);
    } finally {
      await probe.stop();
      await agent.close();
      await new Promise((resolve) => engine.close(resolve));
    }
  });

  it('emits no new set for the same answer in another order', async () => {
    let flip = false;
    let calls = 0;
    const probe = new ModelProbe(
      new StaticEndpointSource(['http://127.0.0.1:5']),
      () => {
        calls++;
        flip = !flip;
        const models: ProbedModel[] = [{ id: 'base' }, { id: 'lora', parent: 'base' }, { id: 'lora', parent: 'other' }];
        return Promise.resolve(flip ? models : [...models].reverse());
      },
      { intervalMs: 5, retryMs: 5 },
    );
    const sets: EndpointSet[] = [];
    probe.start((set) => sets.push(set));
    await waitFor(() => calls >= 4);
    await probe.stop();
    assert.equal(sets.length, 2, 'the first set, then the one with models');
    assert.deepEqual(sets[1]?.endpoints[0]?.adapters, new Map([['lora', 'base']]), 'an id listed twice keeps its smallest parent');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelProbe, parseModelList } from './model-probe.ts';
import { StaticEndpointSource } from './static-source.ts';
import type { EndpointSet, EndpointSource } from './endpoint.ts';

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
        return Promise.resolve(url.endsWith(':1') ? ['b', 'a'] : ['c']);
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
      () => (fail ? Promise.reject(new Error('down')) : Promise.resolve(['m'])),
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
        return Promise.resolve([`${String(from)}-model`]);
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
    assert.deepEqual(parseModelList('{"object":"list","data":[{"id":"a"},{"id":""},{"x":1},{"id":"b"}]}'), ['a', 'b']);
    assert.throws(() => parseModelList('{"models":[]}'));
    assert.throws(() => parseModelList('not json'));
  });
});

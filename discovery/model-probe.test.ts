import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelProbe, parseModelList } from './model-probe.ts';
import { StaticEndpointSource } from './static-source.ts';
import type { EndpointSet } from './endpoint.ts';

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

  it('parses OpenAI model lists and rejects other shapes', () => {
    assert.deepEqual(parseModelList('{"object":"list","data":[{"id":"a"},{"id":""},{"x":1},{"id":"b"}]}'), ['a', 'b']);
    assert.throws(() => parseModelList('{"models":[]}'));
    assert.throws(() => parseModelList('not json'));
  });
});

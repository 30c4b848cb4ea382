import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint, EndpointSet, EndpointSetListener, EndpointSource } from './endpoint.ts';
import { ModelAllowList, modelMatcher, type DroppedModels } from './model-allow-list.ts';
import { ModelProbe } from './model-probe.ts';

/** A source whose sets the test pushes by hand. */
class ManualSource implements EndpointSource {
  listener: EndpointSetListener | undefined;
  version = 0;
  start(listener: EndpointSetListener): void {
    this.listener = listener;
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  push(endpoints: Endpoint[]): void {
    this.listener?.({ version: ++this.version, endpoints });
  }
}

const endpoint = (id: string, source: string | undefined, models: string[] | undefined): Endpoint => ({
  id,
  url: `http://${id}:8000`,
  models,
  labels: {},
  ready: true,
  draining: false,
  ...(source === undefined ? {} : { source }),
});

function waitFor(condition: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 2_000;
    const tick = () => (condition() ? resolve() : Date.now() > deadline ? reject(new Error('timeout')) : setTimeout(tick, 5));
    tick();
  });
}

describe('model allow-lists', () => {
  it('matches exact names and prefixes ending in *', () => {
    const allows = modelMatcher(['llama-prod', 'team-b-*']);
    assert.ok(allows('llama-prod'));
    assert.ok(allows('team-b-'));
    assert.ok(allows('team-b-mistral'));
    assert.ok(!allows('llama-prod-2'));
    assert.ok(!allows('team-a-x'));
    assert.ok(modelMatcher(['*'])('anything'));
  });

  it("keeps only the models each endpoint's own source allows; one left with none serves nothing", () => {
    const inner = new ManualSource();
    const dropped: DroppedModels[] = [];
    const filter = new ModelAllowList(inner, new Map([['team-b', ['team-b-*']], ['default', ['llama-prod']]]), (d) => dropped.push(d));
    const sets: EndpointSet[] = [];
    filter.start((set) => sets.push(set));
    inner.push([
      endpoint('prod-0', 'default', ['llama-prod']),
      endpoint('intruder', 'team-b', ['llama-prod']),
      endpoint('mixed', 'team-b', ['llama-prod', 'team-b-small']),
      endpoint('pending', 'team-b', undefined),
      endpoint('static-0', 'static', ['anything']),
      endpoint('embedded', undefined, ['whatever']),
    ]);
    const models = Object.fromEntries(sets[0]?.endpoints.map((e) => [e.id, e.models]) ?? []);
    assert.deepEqual(models, {
      'prod-0': ['llama-prod'],
      intruder: [],
      mixed: ['team-b-small'],
      pending: undefined,
      'static-0': ['anything'],
      embedded: ['whatever'],
    });
    assert.equal(sets[0]?.version, 1, 'the inner version passes through');
    assert.deepEqual(
      dropped.map((d) => [d.id, d.source, d.dropped, d.kept]),
      [
        ['intruder', 'team-b', ['llama-prod'], []],
        ['mixed', 'team-b', ['llama-prod'], ['team-b-small']],
      ],
    );
  });

  it('reports a refused claim once per endpoint, again only when the claim changes or the endpoint returns', () => {
    const inner = new ManualSource();
    const dropped: string[] = [];
    const filter = new ModelAllowList(inner, new Map([['team-b', ['team-b-*']]]), (d) => dropped.push(`${d.id}:${d.dropped.join(',')}`));
    filter.start(() => undefined);
    const claim = (models: string[]) => endpoint('intruder', 'team-b', models);
    inner.push([claim(['llama-prod'])]);
    inner.push([claim(['llama-prod'])]);
    inner.push([claim(['llama-prod'])]);
    assert.deepEqual(dropped, ['intruder:llama-prod']);
    inner.push([claim(['gpt-prod'])]);
    inner.push([]);
    inner.push([claim(['gpt-prod'])]);
    assert.deepEqual(dropped, ['intruder:llama-prod', 'intruder:gpt-prod', 'intruder:gpt-prod']);
  });

  it('caps what a report carries (the names come from the pod)', () => {
    const inner = new ManualSource();
    const dropped: DroppedModels[] = [];
    new ModelAllowList(inner, new Map([['b', ['ok']]]), (d) => dropped.push(d)).start(() => undefined);
    inner.push([endpoint('e', 'b', Array.from({ length: 50 }, (_, i) => `${'x'.repeat(500)}${i}`))]);
    assert.equal(dropped[0]?.droppedCount, 50);
    assert.equal(dropped[0]?.dropped.length, 10);
    assert.ok(dropped[0]?.dropped.every((name) => name.length === 100));
  });

  it('filters models learnt through /v1/models, per source, after the probe', async () => {
    const inner = new ManualSource();
    const asked: string[] = [];
    // Both endpoints answer /v1/models with the production model.
    const probe = new ModelProbe(
      inner,
      (url, source) => {
        asked.push(`${String(source)} ${url}`);
        return Promise.resolve([{ id: 'llama-prod' }]);
      },
      { intervalMs: 60_000, retryMs: 10 },
    );
    const filter = new ModelAllowList(probe, new Map([['default', ['llama-prod']], ['team-b', ['team-b-*']]]), () => undefined);
    const sets: EndpointSet[] = [];
    filter.start((set) => sets.push(set));
    inner.push([endpoint('prod-0', 'default', undefined), endpoint('intruder', 'team-b', undefined)]);
    await waitFor(() => sets.at(-1)?.endpoints.every((e) => e.models !== undefined) ?? false);
    assert.deepEqual(sets.at(-1)?.endpoints.map((e) => [e.id, e.models]), [
      ['prod-0', ['llama-prod']],
      ['intruder', []],
    ]);
    assert.deepEqual(asked.sort(), ['default http://prod-0:8000', 'team-b http://intruder:8000'], 'each endpoint is asked as its own source');
    await filter.stop();
  });
});

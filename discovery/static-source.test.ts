import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EndpointSet } from './endpoint.ts';
import { StaticEndpointSource } from './static-source.ts';

function firstSet(source: StaticEndpointSource): EndpointSet {
  let set: EndpointSet | undefined;
  source.start((s) => (set = s));
  assert.ok(set);
  return set;
}

describe('static endpoint source', () => {
  it('gives each URL its configured capacity and metric dialect, matched after normalising the URL', () => {
    const set = firstSet(new StaticEndpointSource(['http://A:8000/', 'http://b:8000'], { 'http://a:8000': 8 }, 'static', { 'HTTP://B:8000/': 'llamacpp' }));
    assert.deepEqual(
      set.endpoints.map((e) => ({ url: e.url, capacity: e.capacity, metricsDialect: e.metricsDialect, source: e.source })),
      [
        { url: 'http://a:8000', capacity: 8, metricsDialect: undefined, source: 'static' },
        { url: 'http://b:8000', capacity: undefined, metricsDialect: 'llamacpp', source: 'static' },
      ],
    );
  });
});

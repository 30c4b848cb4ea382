import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint, EndpointSet, EndpointSetListener, EndpointSource } from './endpoint.ts';
import { StaticEndpointSource } from './static-source.ts';
import { UnionEndpointSource } from './union-source.ts';

/** A source whose sets the test pushes by hand. */
class ManualSource implements EndpointSource {
  listener: EndpointSetListener | undefined;
  stopped = false;
  #version = 0;
  start(listener: EndpointSetListener): void {
    this.listener = listener;
  }
  stop(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }
  push(...ids: string[]): void {
    this.listener?.({ version: ++this.#version, endpoints: ids.map((id) => endpoint(id)) });
  }
}

function endpoint(id: string): Endpoint {
  return { id, url: `http://${id}`, models: ['m'], labels: {}, ready: true, draining: false };
}

describe('union of endpoint sources', () => {
  it('emits its first set only when every source has produced one, then on every change', () => {
    const a = new ManualSource();
    const b = new ManualSource();
    const sets: EndpointSet[] = [];
    new UnionEndpointSource([a, b]).start((set) => sets.push(set));
    a.push('a1');
    assert.equal(sets.length, 0, 'b has not synced: readiness must wait');
    b.push();
    assert.deepEqual(sets.map((s) => s.endpoints.map((e) => e.id)), [['a1']]);
    b.push('b1', 'b2');
    a.push();
    assert.deepEqual(sets.map((s) => s.endpoints.map((e) => e.id)), [['a1'], ['a1', 'b1', 'b2'], ['b1', 'b2']]);
    assert.deepEqual(sets.map((s) => s.version), [1, 2, 3]);
  });

  it('keeps an id claimed twice once, from the first source, and reports it once', () => {
    const a = new ManualSource();
    const b = new ManualSource();
    const duplicates: string[] = [];
    const sets: EndpointSet[] = [];
    new UnionEndpointSource([a, b], (id) => duplicates.push(id)).start((set) => sets.push(set));
    a.push('x');
    b.push('x', 'y');
    b.push('x', 'y');
    assert.deepEqual(sets.at(-1)?.endpoints.map((e) => e.id), ['x', 'y']);
    assert.deepEqual(duplicates, ['x']);
  });

  it('works with a static source (synchronous first set) and stops every source', async () => {
    const k = new ManualSource();
    const sets: EndpointSet[] = [];
    const union = new UnionEndpointSource([k, new StaticEndpointSource(['http://127.0.0.1:9'])]);
    union.start((set) => sets.push(set));
    assert.equal(sets.length, 0);
    k.push('pod');
    assert.deepEqual(sets[0]?.endpoints.map((e) => e.id), ['pod', 'http://127.0.0.1:9']);
    await union.stop();
    assert.equal(k.stopped, true);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint } from '../../discovery/endpoint.ts';
import { LoadView } from './load-view.ts';

const endpoint = (id: string, models: string[] | undefined, extra: Partial<Endpoint> = {}): Endpoint => ({
  id,
  url: `http://127.0.0.1:${id.length + 1000}/prefix/`,
  models,
  labels: {},
  ready: true,
  draining: false,
  ...extra,
});

describe('load view', () => {
  it('indexes routable endpoints by model and knows models of unroutable ones', () => {
    const view = new LoadView();
    assert.equal(view.synced, false);
    view.update({
      version: 1,
      endpoints: [endpoint('a', ['m1']), endpoint('b', ['m1', 'm2']), endpoint('c', ['m3'], { ready: false }), endpoint('d', ['m4'], { draining: true }), endpoint('e', undefined)],
    });
    assert.equal(view.synced, true);
    assert.deepEqual(view.candidates('m1').map((s) => s.id), ['a', 'b']);
    assert.deepEqual(view.candidates('m3'), []);
    assert.equal(view.knowsModel('m3'), true);
    assert.equal(view.knowsModel('m4'), true);
    assert.equal(view.knowsModel('zzz'), false);
    assert.deepEqual(view.routableModels(), ['m1', 'm2']);
    assert.equal([...view.all()].find((s) => s.id === 'a')?.basePath, '/prefix');
  });

  it('keeps counters of endpoints that stay and settles requests of endpoints that left', () => {
    const view = new LoadView();
    view.update({ version: 1, endpoints: [endpoint('a', ['m']), endpoint('b', ['m'])] });
    const [a, b] = view.candidates('m');
    view.begin(a!);
    view.begin(a!);
    view.begin(b!);
    view.update({ version: 2, endpoints: [endpoint('a', ['m'])] });
    const a2 = view.candidates('m')[0];
    assert.equal(a2, a, 'same state object for an endpoint that stays');
    assert.equal(a2?.inFlight, 2);
    assert.equal(b?.present, false);
    assert.equal(b?.routable, false);
    view.settle(b);
    assert.equal(b?.inFlight, 0);
  });

  it('tracks consecutive failures and clears them on success', () => {
    let now = 1000;
    const view = new LoadView(() => now);
    view.update({ version: 1, endpoints: [endpoint('a', ['m'])] });
    const a = view.candidates('m')[0]!;
    view.begin(a);
    view.settle(a, 'connect');
    now = 2000;
    view.begin(a);
    view.settle(a, 'reset');
    assert.equal(a.consecutiveFailures, 2);
    assert.equal(a.lastFailureKind, 'reset');
    assert.equal(a.lastFailureAt, 2000);
    view.begin(a);
    view.settle(a);
    assert.equal(a.consecutiveFailures, 0);
    assert.equal(a.inFlight, 0);
  });
});

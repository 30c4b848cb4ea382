import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointState, statusTable, type DebugEndpoint } from './status-table.ts';

const NOW = Date.parse('2026-12-05T22:00:00.000Z');

function endpoint(id: string, over: Partial<DebugEndpoint> = {}): DebugEndpoint {
  return {
    id,
    models: ['m'],
    ready: true,
    draining: false,
    routable: true,
    inFlight: 2,
    load: { safeStart: null },
    scrape: { metrics: 'fresh', ageMs: 412, waiting: 3, kvCacheUsage: 0.257, lastError: null },
    health: { ejected: false, ejectedUntil: null, modelProbe: null },
    ...over,
  };
}

describe('switchyard status table', () => {
  it('names the first reason an endpoint takes no requests, in routing order', () => {
    assert.equal(endpointState(endpoint('a'), NOW), 'routable');
    assert.equal(endpointState(endpoint('a', { draining: true, ready: false }), NOW), 'draining');
    assert.equal(endpointState(endpoint('a', { ready: false, models: null }), NOW), 'not ready');
    assert.equal(endpointState(endpoint('a', { models: null }), NOW), 'models unknown (probing)');
    assert.equal(endpointState(endpoint('a', { models: null, health: { modelProbe: { error: 'GET /v1/models: 404' } } }), NOW), 'models unknown: GET /v1/models: 404');
    assert.equal(endpointState(endpoint('a', { models: [] }), NOW), 'no allowed model');
    assert.equal(endpointState(endpoint('a', { health: { ejected: true, ejectedUntil: '2026-12-05T22:00:09.200Z' } }), NOW), 'ejected (10 s left)');
  });

  it('renders a fixed document: aligned columns, sources and skipped objects, the count past the listed 20', () => {
    const text = statusTable(
      {
        synced: true,
        routerInFlight: 5,
        endpoints: [
          endpoint('inference/vllm-0', { sessions: 17, load: { safeStart: { phase: 'probing', limit: 12 } } }),
          endpoint('inference/vllm-1', { inFlight: 0, scrape: { metrics: 'unavailable', ageMs: null, waiting: null, kvCacheUsage: null }, health: { ejected: true, ejectedUntil: '2026-12-05T22:00:30.000Z' } }),
        ],
        discovery: [{ name: 'default', kind: 'pods', namespace: 'inference', selector: 'app=vllm', synced: true, healthy: true, endpoints: 2, skippedCount: 22, skipped: [{ id: 'inference/vllm-x', reason: 'no pod IP yet' }] }],
      },
      NOW,
    );
    assert.deepEqual(text, [
      'ENDPOINT          MODELS  STATE                IN FLIGHT  WAITING  KV   SESSIONS  SAFE START  SCRAPE',
      'inference/vllm-0  m       routable             2          3        26%  17        probing 12  fresh 0.4 s',
      'inference/vllm-1  m       ejected (30 s left)  0          -        -    -         -           unavailable',
      '',
      '2 endpoints, 1 routable; router in flight 5; discovery synced',
      'source default (pods in inference, app=vllm): healthy, 2 endpoints, 22 skipped',
      '  skipped inference/vllm-x: no pod IP yet',
      '  (21 more skipped: /debug/endpoints lists the first 20)',
    ]);
  });

  it("names an InferencePool's problem, or the other endpoint picker it names", () => {
    const source = { kind: 'inferencepool', namespace: 'inference', synced: true, healthy: true, endpoints: 0 };
    const text = statusTable(
      {
        synced: true,
        endpoints: [],
        discovery: [
          { ...source, name: 'default', selector: '', pool: { pool: 'inference/old', problem: 'InferencePool old exists only at inference.networking.x-k8s.io/v1alpha2', endpointPicker: null, endpointPickerIsSwitchyard: false } },
          { ...source, name: 'b', selector: 'app=b', pool: { pool: 'inference/b', problem: null, endpointPicker: 'Service/vllm-epp:9002', endpointPickerIsSwitchyard: false } },
          { ...source, name: 'c', selector: 'app=c', pool: { pool: 'inference/c', problem: null, endpointPicker: 'Service/switchyard:9002', endpointPickerIsSwitchyard: true } },
        ],
      },
      NOW,
    );
    assert.deepEqual(text.filter((line) => line.startsWith('  ')), [
      '  InferencePool inference/old: InferencePool old exists only at inference.networking.x-k8s.io/v1alpha2',
      '  InferencePool inference/b names endpoint picker Service/vllm-epp:9002: switchyard routes it by its own rules',
    ]);
  });
});

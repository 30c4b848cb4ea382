import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { EndpointSet } from '../endpoint.ts';
import type { KubeApi } from './kube-api.ts';
import { InferencePoolSource } from './inference-pool-source.ts';
import { FakeKubeApi } from '../../tests/kit/kube/fake-kube-api.ts';
import { apiFor, FAST, pod, podsPath, waitFor } from '../../tests/kit/kube/fixtures.ts';

const POOLS = '/apis/inference.networking.k8s.io/v1/namespaces/ns/inferencepools';
const OLD_POOLS = '/apis/inference.networking.x-k8s.io/v1alpha2/namespaces/ns/inferencepools';

function inferencePool(spec: Record<string, unknown>, name = 'pool') {
  return { apiVersion: 'inference.networking.k8s.io/v1', kind: 'InferencePool', metadata: { name, namespace: 'ns' }, spec: { endpointPickerRef: { name: 'switchyard', port: { number: 9002 } }, ...spec } };
}

const selecting = (labels: Record<string, string>, ports: number[]) => inferencePool({ selector: { matchLabels: labels }, targetPorts: ports.map((number) => ({ number })) });

describe('InferencePool source (fake API server)', () => {
  let fake: FakeKubeApi;
  let api: KubeApi;
  let source: InferencePoolSource | undefined;
  let sets: EndpointSet[];
  const changes: string[] = [];

  beforeEach(async () => {
    fake = new FakeKubeApi();
    api = apiFor(await fake.listen());
    sets = [];
    changes.length = 0;
  });

  afterEach(async () => {
    await source?.stop();
    source = undefined;
    await api.close();
    await fake.close();
  });

  function start(models?: string[]): InferencePoolSource {
    source = new InferencePoolSource('pool-a', { namespace: 'ns', pool: 'pool', models, ownPickerService: 'switchyard' }, api, FAST, {
      poolChanged: (_source, pool, problem, foreign) => changes.push(`${pool} ${problem ?? 'ok'}${foreign === undefined ? '' : ` picker ${foreign}`}`),
    });
    source.start((set) => sets.push(set));
    return source;
  }
  const ids = () => sets.at(-1)?.endpoints.map((e) => e.id) ?? [];
  const status = () => (source as InferencePoolSource).status();

  it('routes to each target port of each selected pod, and follows the selector and the ports', async () => {
    fake.put(podsPath('ns'), pod('a', { ip: '10.0.0.1', labels: { app: 'blue' } }));
    fake.put(podsPath('ns'), pod('b', { ip: '10.0.0.2', labels: { app: 'green' } }));
    fake.put(POOLS, selecting({ app: 'blue' }, [8000, 8001]));
    start(['m']);
    await waitFor(() => ids().length === 2, 'blue pod on two ports');
    assert.deepEqual(ids(), ['ns/a:8000', 'ns/a:8001']);
    assert.deepEqual(sets.at(-1)?.endpoints.map((e) => [e.url, e.models, e.source]), [['http://10.0.0.1:8000', ['m'], 'pool-a'], ['http://10.0.0.1:8001', ['m'], 'pool-a']]);
    fake.put(POOLS, selecting({ app: 'green' }, [8000, 8001]));
    await waitFor(() => ids().join() === 'ns/b:8000,ns/b:8001', 'selector changed to green');
    fake.put(POOLS, selecting({ app: 'green' }, [9000]));
    await waitFor(() => ids().join() === 'ns/b:9000', 'ports changed');
    assert.equal(sets.at(-1)?.endpoints[0]?.url, 'http://10.0.0.2:9000');
    assert.ok(sets.every((s) => s.endpoints.length > 0), 'no empty set while a watch was replaced');
    assert.deepEqual(status().pool, { pool: 'ns/pool', usable: true, problem: null, selector: 'app=green', targetPorts: [9000], endpointPicker: 'Service/switchyard:9002', endpointPickerIsSwitchyard: true });
  });

  it('a pool that is absent gives an empty set and says so; created later, it routes', async () => {
    fake.put(podsPath('ns'), pod('a', { ip: '10.0.0.1' }));
    start();
    await waitFor(() => sets.length === 1, 'first (empty) set');
    assert.deepEqual(ids(), []);
    assert.match(status().pool.problem ?? '', /not found at inference.networking.k8s.io\/v1/);
    fake.put(POOLS, selecting({ app: 'engine' }, [8000]));
    await waitFor(() => ids().length === 1, 'pool created');
    fake.delete(POOLS, 'pool');
    await waitFor(() => ids().length === 0, 'pool deleted: its endpoints go');
    assert.deepEqual(changes.slice(0, 2).map((c) => c.replace(/ not found.*/, ' not found')), ['ns/pool InferencePool pool not found', 'ns/pool ok']);
  });

  it('without the CRD (the API answers 404) the source is synced with no endpoints and says what to install', async () => {
    fake.failLists = { count: 1_000, status: 404 };
    start();
    await waitFor(() => sets.length === 1, 'first (empty) set');
    assert.deepEqual(ids(), []);
    assert.match(status().pool.problem ?? '', /install the Gateway API Inference Extension's CRDs/);
    fake.failLists = { count: 0, status: 404 };
    fake.put(podsPath('ns'), pod('a', { ip: '10.0.0.1' }));
    fake.put(POOLS, selecting({ app: 'engine' }, [8000]));
    await waitFor(() => ids().length === 1, 'CRD and pool there: routed', 5_000);
  });

  it('a pool only at v1alpha2 is reported as an unsupported version', async () => {
    fake.put(OLD_POOLS, { apiVersion: 'inference.networking.x-k8s.io/v1alpha2', kind: 'InferencePool', metadata: { name: 'pool', namespace: 'ns' }, spec: { selector: { app: 'x' }, targetPortNumber: 8000 } });
    start();
    await waitFor(() => /v1alpha2, which switchyard does not support/.test(status().pool.problem ?? ''), 'unsupported version reported');
    assert.deepEqual(ids(), []);
    assert.equal(status().pool.usable, false);
  });

  it('a bad shape gives no endpoints and says why; fixed, it routes', async () => {
    fake.put(podsPath('ns'), pod('a', { ip: '10.0.0.1' }));
    fake.put(POOLS, inferencePool({ targetPorts: [{ number: 8000 }] }));
    start();
    await waitFor(() => sets.length === 1, 'first set');
    assert.deepEqual(ids(), []);
    assert.match(status().pool.problem ?? '', /no selector/);
    fake.put(POOLS, selecting({ app: 'engine' }, [8000]));
    await waitFor(() => ids().length === 1, 'fixed');
  });

  it('a pool naming another endpoint picker is routed, and the status and the observer name that picker', async () => {
    fake.put(podsPath('ns'), pod('a', { ip: '10.0.0.1' }));
    fake.put(POOLS, inferencePool({ selector: { matchLabels: { app: 'engine' } }, targetPorts: [{ number: 8000 }], endpointPickerRef: { name: 'vllm-epp', port: { number: 9002 } } }));
    start();
    await waitFor(() => ids().length === 1, 'routed');
    assert.equal(status().pool.endpointPicker, 'Service/vllm-epp:9002');
    assert.equal(status().pool.endpointPickerIsSwitchyard, false);
    assert.deepEqual(changes, ['ns/pool ok picker Service/vllm-epp:9002']);
  });
});

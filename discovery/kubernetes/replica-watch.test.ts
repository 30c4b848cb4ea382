import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { KubeApi } from './kube-api.ts';
import { countReplicas, ReplicaWatch } from './replica-watch.ts';
import { FakeKubeApi } from '../../tests/kit/kube/fake-kube-api.ts';
import { apiFor, FAST, slicesPath, waitFor } from '../../tests/kit/kube/fixtures.ts';

const CONTROLLER = 'endpointslice-controller.k8s.io';

/** A slice of the router's Service as the EndpointSlice controller writes it. */
function slice(name: string, pods: { name?: string; address: string; terminating?: boolean; ready?: boolean }[], options: { service?: string; manager?: string; addressType?: string } = {}) {
  const service = options.service ?? 'router';
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': options.manager ?? CONTROLLER },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: service, uid: 'u1', controller: true }],
    },
    addressType: options.addressType ?? 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: pods.map((p) => ({
      addresses: [p.address],
      conditions: { ready: p.ready ?? true, serving: p.ready ?? true, terminating: p.terminating ?? false },
      ...(p.name === undefined ? {} : { targetRef: { kind: 'Pod', name: p.name, namespace: 'ns' } }),
    })),
  };
}

describe('router replicas counted from their Service', () => {
  it('counts every pod not terminating, starting ones included, each once across slices and address families', () => {
    const slices = [
      slice('router-a', [{ name: 'r1', address: '10.0.0.1' }, { name: 'r2', address: '10.0.0.2', ready: false }, { name: 'r3', address: '10.0.0.3', terminating: true }]),
      // Dual stack: the same pods again in an IPv6 slice.
      slice('router-b', [{ name: 'r1', address: 'fd00::1' }, { name: 'r2', address: 'fd00::2', ready: false }], { addressType: 'IPv6' }),
      // An endpoint without a pod reference counts by its address.
      slice('router-c', [{ address: '10.0.0.9' }]),
    ];
    assert.equal(countReplicas(slices, 'router'), 3);
  });

  it("counts only the Service's own slices: another Service's and a hand-written one with its label are ignored", () => {
    const slices = [
      slice('router-a', [{ name: 'r1', address: '10.0.0.1' }]),
      slice('other-a', [{ name: 'o1', address: '10.0.1.1' }], { service: 'other' }),
      slice('forged', [{ name: 'f1', address: '10.0.2.1' }, { name: 'f2', address: '10.0.2.2' }], { manager: 'someone' }),
    ];
    assert.equal(countReplicas(slices, 'router'), 1);
  });

  describe('the watch (fake API server)', () => {
    let fake: FakeKubeApi;
    let api: KubeApi;
    let watch: ReplicaWatch | undefined;

    beforeEach(async () => {
      fake = new FakeKubeApi();
      api = apiFor(await fake.listen());
    });

    afterEach(async () => {
      await watch?.stop();
      watch = undefined;
      await api.close();
      await fake.close();
    });

    it('reports the first count and every change, and keeps the last count while lists fail', async () => {
      const path = slicesPath('ns');
      fake.put(path, slice('router-a', [{ name: 'r1', address: '10.0.0.1' }, { name: 'r2', address: '10.0.0.2' }]));
      const counts: number[] = [];
      const told: string[] = [];
      watch = new ReplicaWatch(api, 'ns', 'router', FAST, { counted: (n) => counts.push(n), failing: () => told.push('failing'), recovered: () => told.push('recovered') });
      watch.start();
      await waitFor(() => counts.length === 1, 'first count');
      assert.deepEqual(counts, [2]);
      assert.equal(fake.requests.find((r) => r.path === path)?.query['labelSelector'], 'kubernetes.io/service-name=router', 'lists by the Service label only');
      // A rollout's surge pod appears (not ready yet), then an old one terminates.
      fake.put(path, slice('router-a', [{ name: 'r1', address: '10.0.0.1' }, { name: 'r2', address: '10.0.0.2' }, { name: 'r3', address: '10.0.0.3', ready: false }]));
      await waitFor(() => counts.at(-1) === 3, 'surge pod counted');
      fake.put(path, slice('router-a', [{ name: 'r1', address: '10.0.0.1', terminating: true }, { name: 'r2', address: '10.0.0.2' }, { name: 'r3', address: '10.0.0.3' }]));
      await waitFor(() => counts.at(-1) === 2, 'terminating pod no longer counted');
      assert.deepEqual(counts, [2, 3, 2], 'one report per change');
      fake.failLists = { count: 1_000, status: 500 };
      fake.endWatches();
      await waitFor(() => watch?.status().error !== undefined, 'list failing');
      assert.equal(watch.status().replicas, 2, 'the last count stands');
      assert.deepEqual(counts, [2, 3, 2]);
      assert.deepEqual(told, ['failing'], 'told once, not at every retry');
      fake.failLists = { count: 0, status: 500 };
      await waitFor(() => told.length === 2, 'recovered');
      assert.deepEqual(told, ['failing', 'recovered']);
    });
  });
});

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { EndpointSet } from '../endpoint.ts';
import type { KubeApi } from './kube-api.ts';
import { KubernetesDiscovery } from './kubernetes-discovery.ts';
import { FakeKubeApi } from '../../tests/kit/kube/fake-kube-api.ts';
import { apiFor, FAST, pod, podsPath, slicesPath, waitFor } from '../../tests/kit/kube/fixtures.ts';

describe('Kubernetes endpoint sources (fake API server)', () => {
  let fake: FakeKubeApi;
  let api: KubeApi;
  let discovery: KubernetesDiscovery | undefined;
  const events: string[] = [];

  beforeEach(async () => {
    fake = new FakeKubeApi();
    api = apiFor(await fake.listen());
    events.length = 0;
  });

  afterEach(async () => {
    await discovery?.stop();
    discovery = undefined;
    await api.close();
    await fake.close();
  });

  const observer = {
    synced: (source: string, n: number, skipped: number) => events.push(`synced ${source} ${n}${skipped > 0 ? ` skipped ${skipped}` : ''}`),
    skipped: (source: string, id: string, reason: string) => events.push(`skipped ${source} ${id}: ${reason}`),
    failing: (source: string) => events.push(`failing ${source}`),
    recovered: (source: string) => events.push(`recovered ${source}`),
  };

  it('pods in two namespaces: the first set waits for both lists, then every change emits a merged set', async () => {
    fake.put(podsPath('a'), pod('a1', { ip: '10.0.0.1', namespace: 'a' }));
    fake.failLists = { count: 2, status: 500 }; // the first source to list fails twice
    discovery = KubernetesDiscovery.over(
      api,
      [
        ['team-a', { kind: 'pods', namespace: 'a', labelSelector: 'app=engine', portName: 'http' }],
        ['team-b', { kind: 'pods', namespace: 'b', labelSelector: 'app=engine', portName: 'http' }],
      ],
      FAST,
      observer,
    );
    const sets: EndpointSet[] = [];
    discovery.start((set) => sets.push(set));
    await waitFor(() => sets.length > 0, 'first set');
    assert.equal(sets.length, 1, 'one first set, after both sources listed');
    assert.ok(discovery.status().every((s) => s.synced));
    assert.deepEqual(sets[0]?.endpoints.map((e) => e.id), ['a/a1']);
    fake.put(podsPath('b'), pod('b1', { ip: '10.0.0.2', namespace: 'b' }));
    await waitFor(() => sets.at(-1)?.endpoints.length === 2, 'b1 added');
    assert.ok(sets.every((s, i) => i === 0 || s.version > (sets[i - 1]?.version ?? 0)), 'versions increase');
    assert.deepEqual(events.filter((e) => e.startsWith('synced')).sort(), ['synced team-a 1', 'synced team-b 0']);
  });

  it('emits only when the endpoints change, not on every object update', async () => {
    const path = podsPath('ns');
    fake.put(path, pod('a'));
    discovery = KubernetesDiscovery.over(api, [['default', { kind: 'pods', namespace: 'ns', labelSelector: 'app=engine', portName: 'http' }]], FAST);
    const sets: EndpointSet[] = [];
    discovery.start((set) => sets.push(set));
    await waitFor(() => fake.watchers > 0, 'watching');
    const base = pod('a');
    fake.put(path, { ...base, status: { ...base.status, startTime: '2026-01-01T00:00:00Z' } }); // irrelevant change
    fake.put(path, pod('a', { ready: false }));
    await waitFor(() => sets.at(-1)?.endpoints[0]?.ready === false, 'not ready');
    assert.equal(sets.length, 2, 'the irrelevant update emitted nothing');
  });

  it('while the API is down: the last set stays, status and observer say so; back: re-listed and converged', async () => {
    const path = podsPath('ns');
    fake.put(path, pod('a', { ip: '10.0.0.1' }));
    fake.put(path, pod('b', { ip: '10.0.0.2' }));
    discovery = KubernetesDiscovery.over(api, [['default', { kind: 'pods', namespace: 'ns', labelSelector: 'app=engine', portName: 'http' }]], FAST, observer);
    const sets: EndpointSet[] = [];
    discovery.start((set) => sets.push(set));
    await waitFor(() => fake.watchers > 0, 'watching');
    fake.goDown();
    await waitFor(() => discovery?.status()[0]?.restarts.error === 3, 'three failed attempts');
    const status = discovery.status()[0];
    assert.equal(status?.healthy, false);
    assert.equal(status?.endpoints, 2, 'last good set still reported');
    assert.equal(sets.length, 1);
    assert.deepEqual(events, ['synced default 2', 'failing default'], 'failing logged once, not per attempt');
    fake.comeBack();
    fake.delete(path, 'b');
    await waitFor(() => sets.at(-1)?.endpoints.length === 1, 'converged');
    assert.equal(discovery.status()[0]?.healthy, true);
    assert.deepEqual(events, ['synced default 2', 'failing default', 'recovered default']);
  });

  it('a skipped pod is reported once with its reason, again only when the reason changes, and counted in the status', async () => {
    const path = podsPath('ns');
    const twoPorts = [{ name: 'api', containerPort: 8000 }, { name: 'metrics', containerPort: 9000 }];
    fake.put(path, pod('good', { ip: '10.0.0.1' }));
    fake.put(path, pod('pending', { ip: '' }));
    discovery = KubernetesDiscovery.over(api, [['default', { kind: 'pods', namespace: 'ns', labelSelector: 'app=engine', portName: 'http' }]], FAST, observer);
    const sets: EndpointSet[] = [];
    discovery.start((set) => sets.push(set));
    await waitFor(() => sets.length > 0, 'first set');
    fake.put(path, pod('good', { ip: '10.0.0.1', ready: false })); // a change of another pod re-maps every pod
    await waitFor(() => sets.length === 2, 'second set');
    fake.put(path, pod('pending', { ip: '10.0.0.2', ports: twoPorts }));
    await waitFor(() => events.some((e) => e.includes('several ports')), 'new reason reported');
    fake.put(path, pod('pending', { ip: '10.0.0.2', ports: [twoPorts[0]!] }));
    await waitFor(() => sets.at(-1)?.endpoints.length === 2, 'mapped once it has one port');
    assert.equal(discovery.status()[0]?.skippedCount, 0);
    fake.put(path, pod('pending', { ip: '10.0.0.2', ports: twoPorts }));
    await waitFor(() => discovery?.status()[0]?.skippedCount === 1, 'skipped again');
    assert.deepEqual(events, [
      'skipped default ns/pending: no pod IP yet',
      'synced default 1 skipped 1',
      'skipped default ns/pending: several ports, none named http: set discovery.port or the switchyard.io/port annotation',
      'skipped default ns/pending: several ports, none named http: set discovery.port or the switchyard.io/port annotation',
    ], 'once per reason, and again after it mapped in between');
  });

  it('endpointslices of a Service, selected by the kubernetes.io/service-name label', async () => {
    const path = slicesPath('ns');
    const slice = (name: string, service: string, address: string, ready: boolean) => ({
      metadata: {
        name,
        namespace: 'ns',
        labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: service, uid: `uid-${service}`, controller: true, blockOwnerDeletion: true }],
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready }, targetRef: { kind: 'Pod', name: `pod-${address}`, namespace: 'ns' } }],
      ports: [{ name: 'http', port: 8000 }],
    });
    fake.put(path, slice('vllm-1', 'vllm', '10.0.0.1', true));
    fake.put(path, slice('other-1', 'other', '10.0.0.9', true));
    discovery = KubernetesDiscovery.over(api, [['default', { kind: 'endpointslices', namespace: 'ns', service: 'vllm', portName: 'http' }]], FAST);
    const sets: EndpointSet[] = [];
    discovery.start((set) => sets.push(set));
    await waitFor(() => sets.length > 0, 'first set');
    assert.deepEqual(sets[0]?.endpoints.map((e) => e.url), ['http://10.0.0.1:8000']);
    fake.put(path, slice('vllm-1', 'vllm', '10.0.0.1', false));
    await waitFor(() => sets.at(-1)?.endpoints[0]?.ready === false, 'not ready');
    assert.equal(fake.requests[0]?.query['labelSelector'], 'kubernetes.io/service-name=vllm');
  });

  it('a slice labelled for the Service but not written by its controller is ignored, and shows under skipped', async () => {
    const path = slicesPath('ns');
    const entry = (address: string, pod: string) => ({ addresses: [address], conditions: { ready: true }, targetRef: { kind: 'Pod', name: pod, namespace: 'ns' } });
    const owned = {
      metadata: {
        name: 'vllm-abcde',
        namespace: 'ns',
        labels: { 'kubernetes.io/service-name': 'vllm', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'vllm', uid: 'uid-vllm', controller: true, blockOwnerDeletion: true }],
      },
      addressType: 'IPv4',
      endpoints: [entry('10.0.0.1', 'engine-0')],
      ports: [{ name: 'http', port: 8000 }],
    };
    fake.put(path, owned);
    // Anyone who may create EndpointSlices in the namespace can add the Service's label to a slice of their own.
    fake.put(path, {
      metadata: { name: 'vllm-extra', namespace: 'ns', labels: { 'kubernetes.io/service-name': 'vllm' } },
      addressType: 'IPv4',
      endpoints: [entry('10.0.0.66', 'intruder')],
      ports: [{ name: 'http', port: 8000 }],
    });
    discovery = KubernetesDiscovery.over(api, [['prod', { kind: 'endpointslices', namespace: 'ns', service: 'vllm', portName: 'http' }]], FAST);
    const sets: EndpointSet[] = [];
    discovery.start((set) => sets.push(set));
    await waitFor(() => sets.length > 0, 'first set');
    assert.deepEqual(sets[0]?.endpoints.map((e) => [e.id, e.url, e.source]), [['ns/engine-0', 'http://10.0.0.1:8000', 'prod']]);
    assert.deepEqual(discovery.status()[0]?.skipped, [{ id: 'ns/vllm-extra', reason: 'managed by no one, not by endpointslice-controller.k8s.io' }]);
  });

  it("every endpoint names its source, so the source's allow-list and engine key follow it", async () => {
    fake.put(podsPath('a'), pod('a1', { ip: '10.0.0.1', namespace: 'a' }));
    fake.put(podsPath('b'), pod('b1', { ip: '10.0.0.2', namespace: 'b', annotations: { 'switchyard.io/models': 'llama-prod' } }));
    discovery = KubernetesDiscovery.over(
      api,
      [
        ['default', { kind: 'pods', namespace: 'a', labelSelector: 'app=engine', portName: 'http' }],
        ['team-b', { kind: 'pods', namespace: 'b', labelSelector: 'app=engine', portName: 'http' }],
      ],
      FAST,
    );
    const sets: EndpointSet[] = [];
    discovery.start((set) => sets.push(set));
    await waitFor(() => sets.length > 0, 'first set');
    assert.deepEqual(sets[0]?.endpoints.map((e) => [e.id, e.source]), [['a/a1', 'default'], ['b/b1', 'team-b']]);
  });
});

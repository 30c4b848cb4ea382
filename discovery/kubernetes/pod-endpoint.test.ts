import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { podEndpoint, type PodObject } from './pod-endpoint.ts';
import { ownershipProblem, sliceEndpoints, type EndpointSliceObject } from './slice-endpoints.ts';
import { pod } from '../../tests/kit/kube/fixtures.ts';

const SETTINGS = { portName: 'http' };

function endpointOf(p: PodObject, settings: { portName: string; port?: number } = SETTINGS) {
  const mapped = podEndpoint('ns/p', p, settings);
  assert.ok('endpoint' in mapped, `skipped: ${'skipped' in mapped ? mapped.skipped : ''}`);
  return mapped.endpoint;
}

function skipReason(p: PodObject, settings: { portName: string; port?: number } = SETTINGS): string {
  const mapped = podEndpoint('ns/p', p, settings);
  assert.ok('skipped' in mapped);
  return mapped.skipped;
}

describe('pod → endpoint', () => {
  it('a Running, Ready pod with an IP and no deletionTimestamp takes requests', () => {
    const e = endpointOf(pod('p', { ip: '10.1.2.3', port: 8000 }));
    assert.deepEqual(
      { id: e.id, url: e.url, ready: e.ready, draining: e.draining, models: e.models, labels: e.labels },
      { id: 'ns/p', url: 'http://10.1.2.3:8000', ready: true, draining: false, models: undefined, labels: { app: 'engine' } },
    );
  });

  it('not Ready, or not Running, is listed but not ready', () => {
    assert.equal(endpointOf(pod('p', { ready: false })).ready, false);
    assert.equal(endpointOf(pod('p', { phase: 'Pending' })).ready, false);
  });

  it('a pod being deleted drains (no new requests, in-flight ones finish)', () => {
    const e = endpointOf(pod('p', { deleting: true }));
    assert.equal(e.ready, false);
    assert.equal(e.draining, true);
  });

  it('pods without an IP, or finished, give no endpoint', () => {
    assert.match(skipReason(pod('p', { ip: '' })), /no pod IP/);
    assert.match(skipReason(pod('p', { phase: 'Succeeded' })), /Succeeded/);
    assert.match(skipReason(pod('p', { phase: 'Failed' })), /Failed/);
  });

  it('port: the switchyard.io/port annotation, then the named container port, then discovery.port, then the only port, then 8000', () => {
    assert.equal(endpointOf(pod('p', { port: 8000, annotations: { 'switchyard.io/port': '9000' } })).url, 'http://10.1.0.1:9000');
    assert.equal(endpointOf(pod('p', { port: 8000 })).url, 'http://10.1.0.1:8000');
    assert.equal(endpointOf(pod('p', { port: 8000, portName: 'metrics' }), { portName: 'http', port: 7000 }).url, 'http://10.1.0.1:7000');
    assert.match(skipReason(pod('p', { annotations: { 'switchyard.io/port': 'eighty' } })), /bad switchyard.io\/port/);
    assert.match(skipReason(pod('p', { annotations: { 'switchyard.io/port': '70000' } })), /bad/);
  });

  it('stock vLLM pods: an unnamed or otherwise named only port is the engine port; no declared port means 8000', () => {
    assert.equal(endpointOf(pod('p', { ports: [{ containerPort: 8000 }] })).url, 'http://10.1.0.1:8000', "vLLM's Kubernetes guide: one unnamed port");
    assert.equal(endpointOf(pod('p', { ports: [{ name: 'container-port', containerPort: 8001 }] })).url, 'http://10.1.0.1:8001', 'an otherwise named only port');
    assert.equal(endpointOf(pod('p', { ports: [] })).url, 'http://10.1.0.1:8000');
    const two = pod('p', { ports: [{ name: 'api', containerPort: 8000 }, { name: 'metrics', containerPort: 9000 }] });
    assert.equal(skipReason(two), 'several ports, none named http: set discovery.port or the switchyard.io/port annotation');
    assert.equal(endpointOf(two, { portName: 'api' }).url, 'http://10.1.0.1:8000');
    assert.equal(endpointOf(two, { portName: 'http', port: 9000 }).url, 'http://10.1.0.1:9000');
  });

  it('models: the switchyard.io/models annotation (comma-separated), else the switchyard.io/model label, else the probe', () => {
    assert.deepEqual(endpointOf(pod('p', { annotations: { 'switchyard.io/models': ' llama-3 , qwen,llama-3,' } })).models, ['llama-3', 'qwen']);
    assert.deepEqual(endpointOf(pod('p', { labels: { app: 'engine', 'switchyard.io/model': 'qwen' } })).models, ['qwen']);
    assert.deepEqual(
      endpointOf(pod('p', { labels: { 'switchyard.io/model': 'qwen' }, annotations: { 'switchyard.io/models': 'a,b' } })).models,
      ['a', 'b'],
      'annotation wins',
    );
    assert.equal(endpointOf(pod('p', { annotations: { 'switchyard.io/models': ' , ' } })).models, undefined);
  });

  it('metric dialect from the switchyard.io/metrics-dialect annotation, else the label; an unknown value leaves the default', () => {
    assert.equal(endpointOf(pod('p', { annotations: { 'switchyard.io/metrics-dialect': 'SGLang ' } })).metricsDialect, 'sglang');
    assert.equal(endpointOf(pod('p', { labels: { 'switchyard.io/metrics-dialect': 'llamacpp' } })).metricsDialect, 'llamacpp');
    assert.equal(endpointOf(pod('p', { labels: { 'switchyard.io/metrics-dialect': 'tgi' }, annotations: { 'switchyard.io/metrics-dialect': 'none' } })).metricsDialect, 'none');
    assert.equal(endpointOf(pod('p', { annotations: { 'switchyard.io/metrics-dialect': 'triton' } })).metricsDialect, undefined);
    assert.equal(endpointOf(pod('p')).metricsDialect, undefined);
  });

  it('capacity from the switchyard.io/capacity annotation; a bad value is ignored', () => {
    assert.equal(endpointOf(pod('p', { annotations: { 'switchyard.io/capacity': '64' } })).capacity, 64);
    assert.equal(endpointOf(pod('p', { annotations: { 'switchyard.io/capacity': '0' } })).capacity, undefined);
    assert.equal(endpointOf(pod('p', { annotations: { 'switchyard.io/capacity': 'lots' } })).capacity, undefined);
  });

  it('IPv6 pod IPs are bracketed', () => {
    assert.equal(endpointOf(pod('p', { ip: 'fd00::5' })).url, 'http://[fd00::5]:8000');
  });
});

/** The Service's controller reference, as the EndpointSlice controller writes it. */
const SERVICE_OWNER = { apiVersion: 'v1', kind: 'Service', name: 'vllm', uid: '6f1c0b3e-0000-4000-8000-000000000001', controller: true, blockOwnerDeletion: true };
const CONTROLLER_LABELS = { 'kubernetes.io/service-name': 'vllm', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' };
const SLICE_SETTINGS = { portName: 'http', service: 'vllm' };

/** A slice as the EndpointSlice controller writes it for Service `vllm`. */
function slice(name: string, endpoints: NonNullable<EndpointSliceObject['endpoints']>, ports: EndpointSliceObject['ports'] = [{ name: 'http', port: 8000 }], addressType = 'IPv4'): EndpointSliceObject {
  return { metadata: { name, namespace: 'ns', labels: CONTROLLER_LABELS, ownerReferences: [SERVICE_OWNER] }, addressType, endpoints, ports };
}

const target = (name: string) => ({ kind: 'Pod', name, namespace: 'ns' });

describe('EndpointSlices → endpoints', () => {
  it('respects ready, serving and terminating', () => {
    const { endpoints } = sliceEndpoints(
      [
        slice('s1', [
          { addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, targetRef: target('ready') },
          { addresses: ['10.0.0.2'], conditions: {}, targetRef: target('unset') },
          { addresses: ['10.0.0.3'], conditions: { ready: false, serving: false, terminating: false }, targetRef: target('not-ready') },
          { addresses: ['10.0.0.4'], conditions: { ready: false, serving: true, terminating: true }, targetRef: target('terminating') },
          { addresses: ['10.0.0.5'], conditions: { ready: true, serving: false }, targetRef: target('publish-not-ready') },
        ]),
      ],
      SLICE_SETTINGS,
    );
    const byId = Object.fromEntries(endpoints.map((e) => [e.id, { ready: e.ready, draining: e.draining }]));
    assert.deepEqual(byId, {
      'ns/ready': { ready: true, draining: false },
      'ns/unset': { ready: true, draining: false },
      'ns/not-ready': { ready: false, draining: false },
      'ns/terminating': { ready: false, draining: true },
      'ns/publish-not-ready': { ready: false, draining: false },
    });
    assert.equal(endpoints[0]?.url, 'http://10.0.0.1:8000');
    assert.equal(endpoints[0]?.models, undefined, 'models come from the probe');
  });

  it('port: the named one, else the only one, else the default, else 8000 when none is listed; FQDN slices are skipped', () => {
    const one = [{ addresses: ['10.0.0.1'], conditions: {}, targetRef: target('a') }];
    assert.equal(sliceEndpoints([slice('s', one, [{ name: 'metrics', port: 9 }, { name: 'http', port: 8001 }])], SLICE_SETTINGS).endpoints[0]?.url, 'http://10.0.0.1:8001');
    assert.equal(sliceEndpoints([slice('s', one, [{ name: '', port: 8002 }])], SLICE_SETTINGS).endpoints[0]?.url, 'http://10.0.0.1:8002');
    assert.equal(sliceEndpoints([slice('s', one, [{ name: 'a', port: 1 }, { name: 'b', port: 2 }])], { ...SLICE_SETTINGS, port: 8003 }).endpoints[0]?.url, 'http://10.0.0.1:8003');
    const none = sliceEndpoints([slice('s', one, [{ name: 'a', port: 1 }, { name: 'b', port: 2 }])], SLICE_SETTINGS);
    assert.equal(none.endpoints.length, 0);
    assert.match(none.skipped[0]?.reason ?? '', /several ports, none named http: set discovery.port/);
    assert.equal(sliceEndpoints([slice('s', one, [])], SLICE_SETTINGS).endpoints[0]?.url, 'http://10.0.0.1:8000', 'a slice listing no port: vLLM\'s 8000');
    assert.match(sliceEndpoints([slice('s', one, undefined, 'FQDN')], SLICE_SETTINGS).skipped[0]?.reason ?? '', /FQDN/);
  });

  it('an endpoint in two slices at once is kept once, its ready copy preferred; ids without a pod use the address', () => {
    const { endpoints } = sliceEndpoints(
      [
        slice('s1', [{ addresses: ['10.0.0.1'], conditions: { ready: false }, targetRef: target('a') }]),
        slice('s2', [
          { addresses: ['10.0.0.1'], conditions: { ready: true }, targetRef: target('a') },
          { addresses: ['10.0.0.9'], conditions: {} },
        ]),
        slice('v6', [{ addresses: ['fd00::1'], conditions: {}, zone: 'z1', nodeName: 'n1' }], [{ name: 'http', port: 80 }], 'IPv6'),
      ],
      SLICE_SETTINGS,
    );
    assert.deepEqual(endpoints.map((e) => [e.id, e.ready]), [['ns/a', true], ['ns/10.0.0.9', true], ['ns/fd00::1', true]]);
    assert.equal(endpoints[2]?.url, 'http://[fd00::1]:80');
    assert.deepEqual(endpoints[2]?.labels, { 'topology.kubernetes.io/zone': 'z1', 'kubernetes.io/hostname': 'n1' });
  });
});

describe('EndpointSlices: only the Service\'s own slices count', () => {
  const one = [{ addresses: ['10.0.0.1'], conditions: {}, targetRef: target('a') }];
  const withMeta = (metadata: NonNullable<EndpointSliceObject['metadata']>): EndpointSliceObject => ({ ...slice('s', one), metadata: { name: 's', namespace: 'ns', ...metadata } });

  it('accepts a slice the EndpointSlice controller wrote for the Service', () => {
    assert.equal(ownershipProblem(slice('s', one), SLICE_SETTINGS), undefined);
    assert.equal(sliceEndpoints([slice('s', one)], SLICE_SETTINGS).endpoints.length, 1);
  });

  it('refuses a slice labelled for the Service that no controller owns (anyone may create one)', () => {
    const forged = withMeta({ labels: { 'kubernetes.io/service-name': 'vllm' } });
    const mapped = sliceEndpoints([forged], SLICE_SETTINGS);
    assert.equal(mapped.endpoints.length, 0);
    assert.match(mapped.skipped[0]?.reason ?? '', /managed by no one, not by endpointslice-controller\.k8s\.io/);
  });

  it("refuses a slice that claims the controller's managed-by label without the Service as its owner", () => {
    assert.match(ownershipProblem(withMeta({ labels: CONTROLLER_LABELS }), SLICE_SETTINGS) ?? '', /does not own it/);
    const otherOwner = { ...SERVICE_OWNER, name: 'other' };
    assert.match(ownershipProblem(withMeta({ labels: CONTROLLER_LABELS, ownerReferences: [otherOwner] }), SLICE_SETTINGS) ?? '', /controlled by Service other/);
    const notController = { ...SERVICE_OWNER, controller: false };
    assert.match(ownershipProblem(withMeta({ labels: CONTROLLER_LABELS, ownerReferences: [notController] }), SLICE_SETTINGS) ?? '', /does not own it/);
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vllm', uid: 'x', controller: true };
    assert.match(ownershipProblem(withMeta({ labels: CONTROLLER_LABELS, ownerReferences: [deployment] }), SLICE_SETTINGS) ?? '', /controlled by Deployment vllm/);
  });

  it('refuses a slice labelled for another Service, whatever the list returned', () => {
    assert.match(ownershipProblem(withMeta({ labels: { ...CONTROLLER_LABELS, 'kubernetes.io/service-name': 'other' }, ownerReferences: [SERVICE_OWNER] }), SLICE_SETTINGS) ?? '', /label is not vllm/);
  });

  it('other managers only when configured: a named one, or * for any; a controller owner must still be the Service (or its mirrored Endpoints)', () => {
    const custom = withMeta({ labels: { 'kubernetes.io/service-name': 'vllm', 'endpointslice.kubernetes.io/managed-by': 'my-controller' } });
    assert.match(ownershipProblem(custom, SLICE_SETTINGS) ?? '', /managed by "my-controller"/);
    assert.equal(ownershipProblem(custom, { ...SLICE_SETTINGS, sliceManagers: ['my-controller'] }), undefined);
    assert.equal(ownershipProblem(withMeta({ labels: { 'kubernetes.io/service-name': 'vllm' } }), { ...SLICE_SETTINGS, sliceManagers: ['*'] }), undefined);
    const mirrored = withMeta({
      labels: { 'kubernetes.io/service-name': 'vllm', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name: 'vllm', uid: 'y', controller: true }],
    });
    assert.equal(ownershipProblem(mirrored, { ...SLICE_SETTINGS, sliceManagers: ['endpointslice-controller.k8s.io', 'endpointslicemirroring-controller.k8s.io'] }), undefined);
    const ownedElsewhere = withMeta({ labels: { 'kubernetes.io/service-name': 'vllm' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'other', uid: 'z', controller: true }] });
    assert.match(ownershipProblem(ownedElsewhere, { ...SLICE_SETTINGS, sliceManagers: ['*'] }) ?? '', /controlled by Service other/);
  });
});

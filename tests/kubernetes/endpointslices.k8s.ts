/**
 * EndpointSlice discovery against a real kube-apiserver (built from source,
 * RBAC on). EndpointSlice validation rejects loopback addresses, so the
 * engine simulators run in network namespaces created here (veth pairs on
 * 10.251.N.0/30) and are removed afterwards. The router runs as a child
 * process with `--kubeconfig` carrying the `switchyard` service account's
 * token; nothing fills slices here (no controller-manager), so the test
 * writes them the way the EndpointSlice controller would.
 *
 * Run: npm run test:k8s (needs root for `ip netns`).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { startRouter, type RouterProcess } from '../kit/router-process.ts';
import { chat, Cluster, debugDocument, percentile, RBAC_DIR, routable, waitForDebug, type DebugDocument } from '../kit/kube/cluster.ts';
import { metricValue, NetnsHosts } from '../kit/netns.ts';

const NS = 'inference';
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;

type Conditions = { ready: boolean; serving: boolean; terminating: boolean };
const READY: Conditions = { ready: true, serving: true, terminating: false };
const NOT_READY: Conditions = { ready: false, serving: false, terminating: false };
const TERMINATING: Conditions = { ready: false, serving: true, terminating: true };

describe('EndpointSlice discovery against a real kube-apiserver', { timeout: 600_000 }, () => {
  let cluster: Cluster | undefined;
  let hosts: NetnsHosts | undefined;
  let router: RouterProcess | undefined;
  let token = '';
  /** The Service's uid, for the slices' ownerReference (as the EndpointSlice controller sets it). */
  let serviceUid = '';
  const latencies: { event: string; ms: number }[] = [];

  const id = (i: number) => `${NS}/engine-${i}`;
  const api = () => cluster as Cluster;
  const r = () => router as RouterProcess;
  const host = (i: number) => hosts?.hosts[i] as NonNullable<NetnsHosts['hosts'][number]>;

  function slice(conditions: Conditions[]) {
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'vllm-abcde',
        labels: { 'kubernetes.io/service-name': 'vllm', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'vllm', uid: serviceUid, controller: true, blockOwnerDeletion: true }],
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8000, protocol: 'TCP' }],
      endpoints: conditions.map((c, i) => ({ addresses: [host(i).address], conditions: c, targetRef: { kind: 'Pod', name: `engine-${i}`, namespace: NS }, nodeName: 'e2e-node' })),
    };
  }

  const setConditions = (conditions: Conditions[]) => async () => {
    await api().must('PATCH', `${SLICES}/vllm-abcde`, { endpoints: slice(conditions).endpoints }, 'application/merge-patch+json');
  };

  async function timed(event: string, write: () => Promise<void>, expect: (doc: DebugDocument) => boolean): Promise<void> {
    const since = performance.now();
    await write();
    latencies.push({ event, ms: await waitForDebug(r().admin, expect, since, event) });
  }

  async function engineMetric(i: number, name: string): Promise<number> {
    return metricValue(await (await fetch(`${host(i).url}/metrics`)).text(), name);
  }

  before(async () => {
    hosts = await NetnsHosts.create(2, 'sim-model');
    cluster = await Cluster.start();
    await api().must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const service = (await api().must('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'vllm' },
      spec: { ports: [{ name: 'http', port: 8000, targetPort: 8000 }] },
    })) as { metadata: { uid: string } };
    serviceUid = service.metadata.uid;
    await api().applyFile(join(RBAC_DIR, 'serviceaccount.yaml'), NS);
    await api().applyFile(join(RBAC_DIR, 'endpointslices.yaml'), NS, (object) => {
      for (const subject of (object['subjects'] as { namespace: string }[] | undefined) ?? []) subject.namespace = NS;
    });
    token = await api().token(NS, 'switchyard');
    const kubeconfig = join(api().dir, 'router-kubeconfig');
    api().writeKubeconfig(kubeconfig, token, NS);
    // Namespace from the kubeconfig context; credentials from the file named by --kubeconfig.
    router = await startRouter(['--kubeconfig', kubeconfig, '--discovery-mode', 'endpointslices', '--discovery-service', 'vllm', '--discovery-backoff-initial-ms', '200', '--discovery-backoff-max-ms', '2000']);
  });

  after(async () => {
    // Router first, so nothing is sent to the hosts while they are removed.
    await router?.stop();
    await hosts?.destroy();
    await cluster?.destroy();
  });

  it('is ready after the first list, with no slices yet', async () => {
    await waitForDebug(r().admin, (doc) => doc.discovery[0]?.synced === true, performance.now(), 'first list');
    assert.equal((await fetch(`${r().admin}/readyz`)).status, 200);
    assert.equal((await chat(r().traffic)).status, 404, 'no endpoint knows the model yet');
  });

  it("the Service's endpoints appear and receive traffic", async () => {
    await timed('slice created, endpoints ready', () => api().must('POST', SLICES, slice([READY, READY])).then(() => undefined), (doc) => routable(doc, id(0)) && routable(doc, id(1)));
    const before = [await engineMetric(0, 'vllm:request_success_total'), await engineMetric(1, 'vllm:request_success_total')];
    for (let i = 0; i < 20; i++) assert.equal((await chat(r().traffic)).status, 200);
    assert.ok((await engineMetric(0, 'vllm:request_success_total')) > (before[0] ?? 0), 'engine-0 served requests');
    assert.ok((await engineMetric(1, 'vllm:request_success_total')) > (before[1] ?? 0), 'engine-1 served requests');
    const doc = await debugDocument(r().admin);
    assert.deepEqual(doc.endpoints.map((e) => e.url).sort(), [`http://${host(0).address}:8000`, `http://${host(1).address}:8000`]);
  });

  it('an endpoint marked terminating gets no new requests while its in-flight stream completes', async () => {
    const done = chat(r().traffic, { stream: true, headers: { 'x-sim-itl-ms': '100', 'x-sim-output-tokens': '25' } });
    let victim = -1;
    for (let tries = 0; victim < 0 && tries < 500; tries++) {
      for (const i of [0, 1]) if ((await engineMetric(i, 'vllm:num_requests_running')) > 0) victim = i;
      if (victim < 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.ok(victim >= 0, 'the stream started on one engine');
    const conditions = [READY, READY];
    conditions[victim] = TERMINATING;
    await timed('endpoint terminating', setConditions(conditions), (doc) => doc.endpoints.some((e) => e.id === id(victim) && e.draining && !e.routable));
    const victimBefore = await engineMetric(victim, 'vllm:request_success_total');
    for (let i = 0; i < 10; i++) assert.equal((await chat(r().traffic)).status, 200);
    assert.equal(await engineMetric(victim, 'vllm:request_success_total'), victimBefore, 'no new request reached the terminating endpoint');
    const stream = await done;
    assert.equal(stream.status, 200);
    assert.ok(stream.done, 'the in-flight stream finished with [DONE]');
    await timed('endpoint ready again', setConditions([READY, READY]), (doc) => routable(doc, id(victim)));
  });

  it('ready: false takes an endpoint out of rotation; ready: true brings it back', async () => {
    for (let round = 0; round < 5; round++) {
      await timed('endpoint not ready', setConditions([NOT_READY, READY]), (doc) => !routable(doc, id(0)) && routable(doc, id(1)));
      const before = await engineMetric(0, 'vllm:request_success_total');
      for (let i = 0; i < 5; i++) assert.equal((await chat(r().traffic)).status, 200);
      assert.equal(await engineMetric(0, 'vllm:request_success_total'), before);
      await timed('endpoint ready again', setConditions([READY, READY]), (doc) => routable(doc, id(0)));
    }
  });

  it('a deleted slice removes its endpoints', async () => {
    await timed('slice deleted', () => api().must('DELETE', `${SLICES}/vllm-abcde`).then(() => undefined), (doc) => doc.endpoints.length === 0);
    const answer = await chat(r().traffic);
    assert.ok(answer.status === 404 || answer.status === 503, `no endpoint: ${answer.status}`);
    await timed('slice re-created', () => api().must('POST', SLICES, slice([READY, READY])).then(() => undefined), (doc) => routable(doc, id(0)) && routable(doc, id(1)));
  });

  it('the service account can only read endpointslices in its namespace', async () => {
    assert.equal((await api().withToken(token, 'GET', SLICES)).status, 200);
    assert.equal((await api().withToken(token, 'GET', `/api/v1/namespaces/${NS}/pods`)).status, 403, 'pods mode rights are not granted');
    assert.equal((await api().withToken(token, 'GET', `/api/v1/namespaces/${NS}/secrets`)).status, 403);
    assert.equal((await api().withToken(token, 'GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices')).status, 403);
    assert.equal((await api().withToken(token, 'GET', '/apis/discovery.k8s.io/v1/endpointslices')).status, 403, 'no cluster-wide list');
    assert.equal((await api().withToken(token, 'DELETE', `${SLICES}/vllm-abcde`)).status, 403, 'no writes');
  });

  it('reports discovery latency (API write to routable / not routable)', (t: TestContext) => {
    const values = latencies.map((l) => l.ms);
    t.diagnostic(`discovery latency over ${values.length} API events: p50 ${percentile(values, 50).toFixed(1)} ms, p90 ${percentile(values, 90).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`);
    for (const l of latencies) t.diagnostic(`  ${l.event}: ${l.ms.toFixed(1)} ms`);
    assert.ok(values.length >= 10);
    assert.ok(Math.max(...values) < 1_000, 'every endpoint-set change reached the router within 1 s of the API write');
  });
});

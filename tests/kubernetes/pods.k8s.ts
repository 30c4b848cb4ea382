/**
 * Pod discovery against a real kube-apiserver (built from source, RBAC on).
 * The router runs as a child process with in-cluster credentials: the
 * `switchyard` service account's token, bound by the chart's RBAC files.
 * Pods are bound to a Node created here (no kubelet: the test patches their
 * status the way a kubelet would), with pod IPs on 127.0.0.x where engine
 * simulators listen.
 *
 * Run: npm run test:k8s (builds or reuses the cached binaries first).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRouter, type RouterProcess } from '../kit/router-process.ts';
import { chat, Cluster, debugDocument, percentile, RBAC_DIR, routable, waitForDebug } from '../kit/kube/cluster.ts';

const NS = 'inference';
const OTHER_NS = 'other-team';
const NODE = 'e2e-node';

interface Engine {
  readonly name: string;
  readonly ip: string;
  readonly sim: EngineSimulator;
  port: number;
}

describe('pod discovery against a real kube-apiserver', { timeout: 600_000 }, () => {
  let cluster: Cluster;
  let router: RouterProcess | undefined;
  let token = '';
  const engines = new Map<string, Engine>();
  const latencies: { event: string; ms: number }[] = [];

  const engine = (name: string) => engines.get(name) as Engine;
  const id = (name: string) => `${NS}/${name}`;

  type ContainerPorts = readonly { readonly name?: string; readonly containerPort: number }[];

  async function createPod(name: string, annotations: Record<string, string> = {}, ports: ContainerPorts = [{ name: 'http', containerPort: engine(name).port }]): Promise<void> {
    await cluster.must('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'sim' }, annotations },
      spec: {
        nodeName: NODE,
        automountServiceAccountToken: false,
        containers: [{ name: 'engine', image: 'example.invalid/engine:1', ports }],
      },
    });
  }

  async function setPodStatus(name: string, ready: boolean, ip = engine(name).ip): Promise<void> {
    await cluster.must(
      'PATCH',
      `/api/v1/namespaces/${NS}/pods/${name}/status`,
      { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: '127.0.0.1', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } },
      'application/merge-patch+json',
    );
  }

  /** Runs `write` against the API and measures until the router's view satisfies `expect`. */
  async function timed(event: string, admin: string, write: () => Promise<void>, expect: Parameters<typeof waitForDebug>[1]): Promise<number> {
    const since = performance.now();
    await write();
    const ms = await waitForDebug(admin, expect, since, event);
    latencies.push({ event, ms });
    return ms;
  }

  /** Starts a slow stream and returns it with the engine that runs it. */
  async function slowStream(): Promise<{ done: ReturnType<typeof chat>; victim: string }> {
    const done = chat(requireRouter().traffic, { stream: true, headers: { 'x-sim-itl-ms': '100', 'x-sim-output-tokens': '25' } });
    for (let i = 0; i < 500; i++) {
      const running = [...engines.values()].find((e) => e.sim.scheduler.running > 0);
      if (running !== undefined) return { done, victim: running.name };
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('the slow stream never started on any engine');
  }

  function requireRouter(): RouterProcess {
    assert.ok(router, 'router running');
    return router;
  }

  before(async () => {
    // engine-vllm listens where a stock vLLM pod does: port 8000, declared without a name.
    for (const [name, ip, port] of [['engine-a', '127.0.0.11', 0], ['engine-b', '127.0.0.12', 0], ['engine-c', '127.0.0.13', 0], ['engine-vllm', '127.0.0.14', 8000]] as const) {
      const sim = new EngineSimulator({ model: 'sim-model', knobs: { ttftMs: 0, itlMs: 1, outputTokens: 4 } });
      engines.set(name, { name, ip, sim, port: await sim.listen(ip, port) });
    }
    cluster = await Cluster.start();
    await cluster.must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
    for (const ns of [NS, OTHER_NS]) {
      await cluster.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      // No controller-manager here: create the `default` service account pods run as.
      await cluster.must('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    }
    // The chart's RBAC: the router's service account may only read pods in its namespace.
    await cluster.applyFile(join(RBAC_DIR, 'serviceaccount.yaml'), NS);
    await cluster.applyFile(join(RBAC_DIR, 'pods.yaml'), NS, (object) => {
      const subjects = object['subjects'] as { namespace: string }[] | undefined;
      for (const subject of subjects ?? []) subject.namespace = NS;
    });
    token = await cluster.token(NS, 'switchyard');
    const sa = cluster.mountServiceAccount(token, NS);
    const { host, port } = cluster.hostPort;
    router = await startRouter(
      ['--discovery-mode', 'pods', '--discovery-label-selector', 'app=sim', '--discovery-service-account-dir', sa, '--discovery-backoff-initial-ms', '200', '--discovery-backoff-max-ms', '2000'],
      { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port },
    );
  });

  after(async () => {
    await router?.stop();
    await cluster?.destroy();
    await Promise.all([...engines.values()].map((e) => e.sim.close()));
  });

  it('in-cluster credentials, own namespace: ready after the first list, even with no pods', async () => {
    const r = requireRouter();
    await waitForDebug(r.admin, (doc) => doc.discovery[0]?.synced === true, performance.now(), 'first list');
    assert.equal((await fetch(`${r.admin}/readyz`)).status, 200);
    const doc = await debugDocument(r.admin);
    assert.deepEqual(doc.discovery.map((d) => [d.name, d.healthy, d.endpoints]), [['default', true, 0]]);
  });

  it('pods appear and receive traffic (models from the annotation and from /v1/models)', async () => {
    const admin = requireRouter().admin;
    await createPod('engine-a', { 'switchyard.io/models': 'sim-model', 'switchyard.io/capacity': '16' });
    await createPod('engine-b'); // models probed from the pod's /v1/models
    await waitForDebug(admin, (doc) => doc.discovery[0]?.objects === 2, performance.now(), 'pods listed (no IP yet, so no endpoint)');
    assert.equal((await debugDocument(admin)).endpoints.length, 0);
    assert.ok(!routable(await debugDocument(admin), id('engine-a')), 'a Pending pod with no IP is not routable');
    await timed('pod ready (models annotated)', admin, () => setPodStatus('engine-a', true), (doc) => routable(doc, id('engine-a')));
    await timed('pod ready (models probed)', admin, () => setPodStatus('engine-b', true), (doc) => routable(doc, id('engine-b')));
    const before = { a: engine('engine-a').sim.requests, b: engine('engine-b').sim.requests };
    for (let i = 0; i < 20; i++) assert.equal((await chat(requireRouter().traffic)).status, 200);
    assert.ok(engine('engine-a').sim.requests > before.a, 'engine-a served requests');
    assert.ok(engine('engine-b').sim.requests > before.b, 'engine-b served requests');
  });

  it('a pod patched not ready gets no new requests while its in-flight stream completes', async () => {
    const r = requireRouter();
    const { done, victim } = await slowStream();
    const other = victim === 'engine-a' ? 'engine-b' : 'engine-a';
    await timed('pod not ready', r.admin, () => setPodStatus(victim, false), (doc) => !routable(doc, id(victim)));
    const victimRequests = engine(victim).sim.requests;
    for (let i = 0; i < 10; i++) assert.equal((await chat(r.traffic)).status, 200);
    assert.equal(engine(victim).sim.requests, victimRequests, 'no new request reached the not-ready pod');
    assert.ok(engine(other).sim.requests > 0);
    const stream = await done;
    assert.equal(stream.status, 200);
    assert.ok(stream.done, 'the in-flight stream finished with [DONE]');
    await timed('pod ready again', r.admin, () => setPodStatus(victim, true), (doc) => routable(doc, id(victim)));
  });

  it('a deleted (Terminating) pod gets no new requests while its in-flight stream completes, then leaves', async () => {
    const r = requireRouter();
    const { done, victim } = await slowStream();
    await timed('pod deleted (terminating)', r.admin, async () => {
      const body = (await cluster.must('DELETE', `/api/v1/namespaces/${NS}/pods/${victim}`)) as { metadata: { deletionTimestamp?: string } };
      assert.ok(body.metadata.deletionTimestamp, 'bound to a node with no kubelet: stays Terminating');
    }, (doc) => doc.endpoints.some((e) => e.id === id(victim) && e.draining && !e.routable));
    const victimRequests = engine(victim).sim.requests;
    for (let i = 0; i < 10; i++) assert.equal((await chat(r.traffic)).status, 200);
    assert.equal(engine(victim).sim.requests, victimRequests, 'no new request reached the terminating pod');
    const stream = await done;
    assert.equal(stream.status, 200);
    assert.ok(stream.done, 'the in-flight stream finished with [DONE]');
    await timed('pod removed (force delete)', r.admin, async () => {
      await cluster.must('DELETE', `/api/v1/namespaces/${NS}/pods/${victim}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    }, (doc) => !doc.endpoints.some((e) => e.id === id(victim)));
    // Bring it back for the next test.
    await createPod(victim, { 'switchyard.io/models': 'sim-model' });
    await timed('pod re-created and ready', r.admin, () => setPodStatus(victim, true), (doc) => routable(doc, id(victim)));
  });

  it('more events for the latency sample: ready/not-ready flips', async () => {
    const r = requireRouter();
    for (let i = 0; i < 6; i++) {
      await timed('pod not ready', r.admin, () => setPodStatus('engine-a', false), (doc) => !routable(doc, id('engine-a')));
      await timed('pod ready again', r.admin, () => setPodStatus('engine-a', true), (doc) => routable(doc, id('engine-a')));
    }
  });

  it('survives an API server restart: keeps routing on the last set, reports it, converges to the new state', async () => {
    const r = requireRouter();
    const stoppedAt = Date.now();
    await cluster.stopApiserver();
    await waitForDebug(r.admin, (doc) => doc.discovery[0]?.healthy === false, performance.now(), 'discovery unhealthy');
    for (let i = 0; i < 5; i++) assert.equal((await chat(r.traffic)).status, 200, 'the last good endpoint set stays in use');
    assert.equal((await fetch(`${r.admin}/readyz`)).status, 200, 'readiness does not depend on the API once synced');
    const metrics = await (await fetch(`${r.admin}/metrics`)).text();
    assert.match(metrics, /switchyard_discovery_up\{source="default",kind="pods",namespace="inference"\} 0/);
    assert.ok(r.logs.some((l) => l['msg'] === 'Kubernetes API failing; keeping the last endpoint set'));
    await cluster.startApiserver();
    const since = performance.now();
    // Changes the router has not seen: engine-b goes away, engine-c arrives.
    await cluster.must('DELETE', `/api/v1/namespaces/${NS}/pods/engine-b`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    await createPod('engine-c', { 'switchyard.io/models': 'sim-model' });
    await setPodStatus('engine-c', true);
    const ms = await waitForDebug(
      r.admin,
      (doc) => routable(doc, id('engine-c')) && !doc.endpoints.some((e) => e.id === id('engine-b')) && doc.discovery[0]?.healthy === true,
      since,
      'converged after the restart',
    );
    latencies.push({ event: 'converged after API server restart (includes backoff)', ms });
    const doc = await debugDocument(r.admin);
    assert.ok((doc.discovery[0]?.restarts['error'] ?? 0) >= 1);
    assert.ok(Date.parse(doc.discovery[0]?.lastListAt ?? '') > stoppedAt, 're-listed after the restart');
    assert.ok(r.logs.some((l) => l['msg'] === 'Kubernetes API answering again; re-listed'));
    const cBefore = engine('engine-c').sim.requests;
    for (let i = 0; i < 10; i++) assert.equal((await chat(r.traffic)).status, 200);
    assert.ok(engine('engine-c').sim.requests > cBefore, 'the new pod takes traffic');
  });

  it('stock vLLM pods: one unnamed container port 8000 is found; a pod with several unnamed ports is skipped, logged once, counted', async () => {
    const r = requireRouter();
    await createPod('engine-vllm', { 'switchyard.io/models': 'sim-model' }, [{ containerPort: 8000 }]);
    await timed('stock vLLM pod ready', r.admin, () => setPodStatus('engine-vllm', true), (doc) => routable(doc, id('engine-vllm')));
    assert.equal((await debugDocument(r.admin)).endpoints.find((e) => e.id === id('engine-vllm'))?.url, 'http://127.0.0.14:8000');
    const served = engine('engine-vllm').sim.requests;
    for (let i = 0; i < 20; i++) assert.equal((await chat(r.traffic)).status, 200);
    assert.ok(engine('engine-vllm').sim.requests > served, 'the stock vLLM pod takes traffic');

    const reason = 'several ports, none named http: set discovery.port or the switchyard.io/port annotation';
    await createPod('engine-two-ports', {}, [{ containerPort: 8000 }, { containerPort: 9000 }]);
    await setPodStatus('engine-two-ports', true, '127.0.0.15');
    await waitForDebug(r.admin, (doc) => doc.discovery[0]?.skipped.some((s) => s.id === id('engine-two-ports') && s.reason === reason) === true, performance.now(), 'skipped with its reason');
    // Other pods change: every change re-maps every pod, and the skipped one must not be logged again.
    await setPodStatus('engine-vllm', false);
    await setPodStatus('engine-vllm', true);
    await waitForDebug(r.admin, (doc) => routable(doc, id('engine-vllm')), performance.now(), 'engine-vllm back');
    const logged = r.logs.filter((l) => l['msg'] === 'discovery skipped an object: it gets no endpoint' && l['object'] === id('engine-two-ports'));
    assert.deepEqual(logged.map((l) => l['reason']), ['no pod IP yet', reason], 'each reason logged once');
    assert.match(await (await fetch(`${r.admin}/metrics`)).text(), /switchyard_discovery_skipped_objects\{source="default"\} 1\n/);
    await cluster.must('DELETE', `/api/v1/namespaces/${NS}/pods/engine-two-ports`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
  });

  it('the service account can only read pods in its namespace: no secrets, no other namespace, no writes', async () => {
    assert.equal((await cluster.withToken(token, 'GET', `/api/v1/namespaces/${NS}/pods`)).status, 200);
    assert.equal((await cluster.withToken(token, 'GET', `/api/v1/namespaces/${NS}/pods?watch=1&timeoutSeconds=1`)).status, 200);
    assert.equal((await cluster.withToken(token, 'GET', `/api/v1/namespaces/${NS}/secrets`)).status, 403);
    assert.equal((await cluster.withToken(token, 'GET', `/api/v1/namespaces/${OTHER_NS}/pods`)).status, 403);
    assert.equal((await cluster.withToken(token, 'GET', '/api/v1/pods')).status, 403, 'no cluster-wide list');
    const create = await cluster.withToken(token, 'POST', `/api/v1/namespaces/${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { containers: [{ name: 'x', image: 'x' }] } });
    assert.equal(create.status, 403, 'no writes');
    const patch = await cluster.withToken(token, 'DELETE', `/api/v1/namespaces/${NS}/pods/engine-a`);
    assert.equal(patch.status, 403, 'no deletes');
  });

  it('a router pointed at a namespace it has no rights in stays unready and says 403', async () => {
    const sa = cluster.mountServiceAccount(token, NS);
    const { host, port } = cluster.hostPort;
    const denied = await startRouter(
      ['--discovery-mode', 'pods', '--discovery-namespace', OTHER_NS, '--discovery-label-selector', 'app=sim', '--discovery-service-account-dir', sa, '--discovery-backoff-initial-ms', '100', '--discovery-backoff-max-ms', '200'],
      { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port },
    );
    try {
      await waitForDebug(denied.admin, (doc) => (doc.discovery[0]?.error ?? '').includes('403'), performance.now(), '403 reported');
      assert.equal((await fetch(`${denied.admin}/readyz`)).status, 503);
    } finally {
      await denied.stop();
    }
  });

  it('reports discovery latency (API write to routable / not routable)', (t: TestContext) => {
    const steady = latencies.filter((l) => !l.event.startsWith('converged'));
    const values = steady.map((l) => l.ms);
    t.diagnostic(`discovery latency over ${values.length} API events: p50 ${percentile(values, 50).toFixed(1)} ms, p90 ${percentile(values, 90).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`);
    for (const l of latencies) t.diagnostic(`  ${l.event}: ${l.ms.toFixed(1)} ms`);
    assert.ok(values.length >= 15);
    assert.ok(Math.max(...values) < 1_000, 'every endpoint-set change reached the router within 1 s of the API write');
  });
});

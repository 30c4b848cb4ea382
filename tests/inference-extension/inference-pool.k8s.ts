/**
 * The Gateway API Inference Extension against a real kube-apiserver (built
 * from source, RBAC on) with the extension's v1.3.0 CRDs installed from the
 * Go module proxy (tests/kit/kube/inference-crds.ts): InferencePools as
 * discovery sources, InferenceModelRewrites and InferenceObjectives applied
 * to requests. The router runs as a child process with the `switchyard`
 * service account's in-cluster credentials, bound by the chart's RBAC file
 * for inferencepool sources. As in pods.k8s.ts, pods are bound to a Node
 * with no kubelet; the test patches their status, with pod IPs on 127.0.0.x
 * where engine simulators listen.
 *
 * Run: npm run test:inference-extension (builds or reuses the cached binaries first).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Pool } from 'undici';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRouter, type RouterProcess } from '../kit/router-process.ts';
import { Cluster, debugDocument, RBAC_DIR, routable, waitForDebug, type DebugDocument } from '../kit/kube/cluster.ts';
import { CRD_FILES, INFERENCE_EXTENSION_VERSION, installInferenceCrds } from '../kit/kube/inference-crds.ts';

const NS = 'inference';
const NODE = 'e2e-node';
const POOLS = `/apis/inference.networking.k8s.io/v1/namespaces/${NS}/inferencepools`;
const OLD_POOLS = `/apis/inference.networking.x-k8s.io/v1alpha2/namespaces/${NS}/inferencepools`;
const OBJECTIVES = `/apis/inference.networking.x-k8s.io/v1alpha2/namespaces/${NS}/inferenceobjectives`;
const REWRITES = `/apis/inference.networking.x-k8s.io/v1alpha2/namespaces/${NS}/inferencemodelrewrites`;
/** The bar of the issue: routing follows an API write within this. */
const FOLLOW_MS = 2_000;

/** One pod's engines: a simulator on each of the two ports every pod offers. */
interface Pod {
  readonly name: string;
  readonly ip: string;
  readonly labels: Record<string, string>;
  readonly sims: EngineSimulator[];
}

interface PoolStatusDoc {
  readonly name: string;
  readonly healthy: boolean;
  readonly error: string | null;
  readonly pool?: { pool: string; usable: boolean; problem: string | null; selector: string | null; targetPorts: number[]; endpointPicker: string | null; endpointPickerIsSwitchyard: boolean };
}
interface ExtensionDoc {
  readonly inferenceExtension: { rewrites: { id: string }[]; objectives: Record<string, string>; watches: { kind: string; synced: boolean; used: number; skipped: { id: string; reason: string }[] }[] };
}

describe('Gateway API Inference Extension against a real kube-apiserver', { timeout: 900_000 }, () => {
  let cluster: Cluster;
  let router: RouterProcess | undefined;
  let token = '';
  const ports: number[] = [];
  const pods = new Map<string, Pod>();
  const latencies: { event: string; ms: number }[] = [];
  let canaryShare: number | undefined;

  const r = () => router as RouterProcess;
  const pod = (name: string) => pods.get(name) as Pod;
  const endpoint = (name: string, port: number) => `${NS}/${name}:${port}`;
  const served = (name: string, port: number) => pod(name).sims[ports.indexOf(port)]?.requests ?? 0;
  const sources = async () => (await debugDocument(r().admin)).discovery as unknown as PoolStatusDoc[];
  const routableSet = (doc: DebugDocument) => doc.endpoints.filter((e) => e.routable).map((e) => e.id).sort();

  function pool(name: string, labels: Record<string, string>, targetPorts: readonly number[], picker = 'switchyard') {
    return {
      apiVersion: 'inference.networking.k8s.io/v1',
      kind: 'InferencePool',
      metadata: { name },
      spec: { selector: { matchLabels: labels }, targetPorts: targetPorts.map((number) => ({ number })), endpointPickerRef: { name: picker, port: { number: 9002 } } },
    };
  }

  async function createPod(name: string): Promise<void> {
    const { labels, ip } = pod(name);
    await cluster.must('POST', `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels },
      spec: { nodeName: NODE, automountServiceAccountToken: false, containers: [{ name: 'engine', image: 'example.invalid/engine:1', ports: ports.map((containerPort) => ({ containerPort })) }] },
    });
    await cluster.must(
      'PATCH',
      `/api/v1/namespaces/${NS}/pods/${name}/status`,
      { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } },
      'application/merge-patch+json',
    );
  }

  /** Sends `write` to the API and measures until the router's view satisfies `expect`; fails past {@link FOLLOW_MS}. */
  async function followed(event: string, write: () => Promise<unknown>, expect: (doc: DebugDocument) => boolean): Promise<number> {
    const since = performance.now();
    await write();
    const ms = await waitForDebug(r().admin, expect, since, event);
    latencies.push({ event, ms });
    if (ms > FOLLOW_MS) {
      const doc = (await debugDocument(r().admin)) as unknown as { endpoints: { id: string; modelProbe: unknown }[] };
      assert.fail(`${event}: routing followed after ${ms.toFixed(0)} ms (bar ${FOLLOW_MS} ms); model probes: ${JSON.stringify(doc.endpoints.map((e) => [e.id, e.modelProbe]))}`);
    }
    return ms;
  }

  async function ask(model: string, headers: Record<string, string> = {}): Promise<{ status: number; model: string | undefined }> {
    const response = await fetch(`${r().traffic}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();
    let answered: string | undefined;
    try {
      answered = (JSON.parse(text) as { model?: string }).model;
    } catch {
      // a streamed or non-JSON answer names no model
    }
    return { status: response.status, model: answered };
  }

  before(async () => {
    // Every pod serves on the same two ports (an InferencePool's targetPorts apply to all its pods).
    const specs: [string, string, Record<string, string>, string][] = [
      ['blue-1', '127.0.0.31', { app: 'blue' }, 'sim-model'],
      ['blue-2', '127.0.0.32', { app: 'blue' }, 'sim-model'],
      ['green-1', '127.0.0.33', { app: 'green' }, 'sim-model'],
      ['canary-1', '127.0.0.34', { app: 'canary' }, 'sim-canary'],
    ];
    for (const [name, ip, labels, model] of specs) {
      const sims: EngineSimulator[] = [];
      for (let p = 0; p < 2; p++) {
        const sim = new EngineSimulator({ model, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 1 } });
        const port = await sim.listen(ip, ports[p] ?? 0);
        if (ports[p] === undefined) ports[p] = port;
        sims.push(sim);
      }
      pods.set(name, { name, ip, labels, sims });
    }
    cluster = await Cluster.start();
    await installInferenceCrds(cluster, Object.values(CRD_FILES));
    await cluster.must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
    await cluster.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await cluster.must('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    await cluster.applyFile(join(RBAC_DIR, 'serviceaccount.yaml'), NS);
    await cluster.applyFile(join(RBAC_DIR, 'inferencepools.yaml'), NS, (object) => {
      for (const subject of (object['subjects'] as { namespace: string }[] | undefined) ?? []) subject.namespace = NS;
    });
    token = await cluster.token(NS, 'switchyard');
    const sa = cluster.mountServiceAccount(token, NS);
    // Two more pools beside the mode's: the canary pool (its own picker named) and one only at v1alpha2.
    const config = join(cluster.dir, 'router.json');
    writeFileSync(config, JSON.stringify({ discovery: { sources: { canary: { kind: 'inferencepool', pool: 'pool-canary' }, old: { kind: 'inferencepool', pool: 'pool-old' } } } }));
    const { host, port } = cluster.hostPort;
    router = await startRouter(
      [
        '--config', config,
        '--discovery-mode', 'inferencepool', '--discovery-pool', 'pool-a', '--discovery-service-account-dir', sa,
        // A short resync, so the sources' re-lists meet an RBAC change and a v1alpha2 pool within seconds.
        '--discovery-backoff-initial-ms', '200', '--discovery-backoff-max-ms', '1000', '--discovery-resync-interval-ms', '3000',
        '--server-trusted-proxies', '127.0.0.1', '--admission-max-in-flight', '10', '--access-log', 'json',
      ],
      { KUBERNETES_SERVICE_HOST: host, KUBERNETES_SERVICE_PORT: port },
    );
    for (const name of pods.keys()) await createPod(name);
  });

  after(async () => {
    await router?.stop();
    await cluster?.destroy();
    await Promise.all([...pods.values()].flatMap((p) => p.sims.map((s) => s.close())));
  });

  it(`installs the extension's ${INFERENCE_EXTENSION_VERSION} CRDs; ready with no pool yet, each source saying why it has no endpoints`, async () => {
    await waitForDebug(r().admin, (doc) => doc.discovery.length === 3 && doc.discovery.every((d) => d.synced), performance.now(), 'three pool sources listed');
    assert.equal((await fetch(`${r().admin}/readyz`)).status, 200);
    const doc = await sources();
    assert.deepEqual(doc.map((s) => [s.name, s.pool?.usable]), [['default', false], ['canary', false], ['old', false]]);
    assert.match(doc[0]?.pool?.problem ?? '', /InferencePool pool-a not found at inference.networking.k8s.io\/v1/);
  });

  it('a pool created, scaled, its selector and its target ports changed: routing follows each within 2 s of the write', async () => {
    const [first, second] = ports as [number, number];
    await followed('pool created', () => cluster.must('POST', POOLS, pool('pool-a', { app: 'blue' }, [first])), (doc) => routableSet(doc).join() === [endpoint('blue-1', first), endpoint('blue-2', first)].join());
    const before = served('blue-1', first) + served('blue-2', first);
    for (let i = 0; i < 10; i++) assert.equal((await ask('sim-model')).status, 200);
    assert.equal(served('blue-1', first) + served('blue-2', first) - before, 10, 'the pool\'s pods served every request');

    // Scaled up: one more pod matches the selector.
    pods.set('blue-3', { name: 'blue-3', ip: '127.0.0.33', labels: { app: 'blue' }, sims: pod('green-1').sims });
    await followed('pool scaled up (a pod added)', () => createPod('blue-3'), (doc) => routable(doc, endpoint('blue-3', first)));
    await followed(
      'pool scaled down (a pod deleted)',
      () => cluster.must('DELETE', `/api/v1/namespaces/${NS}/pods/blue-3`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }),
      (doc) => !doc.endpoints.some((e) => e.id === endpoint('blue-3', first)),
    );
    await followed('selector changed', () => cluster.must('PATCH', `${POOLS}/pool-a`, { spec: { selector: { matchLabels: { app: 'green' } } } }, 'application/merge-patch+json'), (doc) => routableSet(doc).join() === endpoint('green-1', first));
    await followed('selector changed back', () => cluster.must('PATCH', `${POOLS}/pool-a`, { spec: { selector: { matchLabels: { app: 'blue' } } } }, 'application/merge-patch+json'), (doc) => routableSet(doc).length === 2 && routable(doc, endpoint('blue-1', first)));
    const both = [endpoint('blue-1', first), endpoint('blue-1', second), endpoint('blue-2', first), endpoint('blue-2', second)].sort().join();
    await followed('target ports changed (one port to two)', () => cluster.must('PATCH', `${POOLS}/pool-a`, { spec: { targetPorts: [{ number: first }, { number: second }] } }, 'application/merge-patch+json'), (doc) => routableSet(doc).join() === both);
    const onSecond = served('blue-1', second) + served('blue-2', second);
    for (let i = 0; i < 20; i++) assert.equal((await ask('sim-model')).status, 200);
    assert.ok(served('blue-1', second) + served('blue-2', second) > onSecond, 'the second target port takes requests');
    const status = (await sources())[0]?.pool;
    assert.deepEqual(status, { pool: `${NS}/pool-a`, usable: true, problem: null, selector: 'app=blue', targetPorts: [first, second], endpointPicker: 'Service/switchyard:9002', endpointPickerIsSwitchyard: true });
  });

  it('a pool naming another endpoint picker is routed by switchyard, and the status and the log name that picker', async () => {
    const [first] = ports as [number];
    await followed('second pool created', () => cluster.must('POST', POOLS, pool('pool-canary', { app: 'canary' }, [first], 'vllm-epp')), (doc) => routable(doc, endpoint('canary-1', first)));
    const canary = (await sources()).find((s) => s.name === 'canary')?.pool;
    assert.deepEqual([canary?.endpointPicker, canary?.endpointPickerIsSwitchyard], ['Service/vllm-epp:9002', false]);
    assert.ok(r().logs.some((l) => l['msg'] === "InferencePool names another endpoint picker; switchyard routes its pods by its own rules, not that picker's" && l['endpointPicker'] === 'Service/vllm-epp:9002'));
    assert.equal((await ask('sim-canary')).model, 'sim-canary');
    const metrics = await (await fetch(`${r().admin}/metrics`)).text();
    assert.match(metrics, /switchyard_inference_pool_ready\{source="canary",pool="inference\/pool-canary"\} 1\n/);
    assert.match(metrics, /switchyard_inference_pool_endpoints\{source="default",pool="inference\/pool-a"\} 4\n/);
  });

  it('a rewrite with weights 90/10 holds within ±2% over 10,000 requests from distinct session keys; a generic rule loses to an exact one', async () => {
    // The generic rule is the older object (creation times have whole seconds): precedence is exact first, then age.
    await cluster.must('POST', REWRITES, { apiVersion: 'inference.networking.x-k8s.io/v1alpha2', kind: 'InferenceModelRewrite', metadata: { name: 'everything-to-canary' }, spec: { poolRef: { name: 'pool-a' }, rules: [{ targets: [{ modelRewrite: 'sim-canary' }] }] } });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await cluster.must('POST', REWRITES, {
      apiVersion: 'inference.networking.x-k8s.io/v1alpha2',
      kind: 'InferenceModelRewrite',
      metadata: { name: 'chat-canary' },
      spec: { poolRef: { name: 'pool-a' }, rules: [{ matches: [{ model: { type: 'Exact', value: 'chat' } }], targets: [{ modelRewrite: 'sim-model', weight: 90 }, { modelRewrite: 'sim-canary', weight: 10 }] }] },
    });
    await waitForDebug(r().admin, (doc) => (doc as unknown as ExtensionDoc).inferenceExtension.rewrites.length === 2, performance.now(), 'both rewrites in force');
    const doc = (await debugDocument(r().admin)) as unknown as ExtensionDoc;
    assert.deepEqual(doc.inferenceExtension.rewrites.map((rw) => rw.id), [`${NS}/everything-to-canary`, `${NS}/chat-canary`], 'oldest first');
    assert.equal((await ask('anything')).model, 'sim-canary', 'the generic rule catches a model no exact rule names');
    const seen = await ask('chat', { 'x-request-id': 'rewrite-seen' });
    await waitForDebug(r().admin, () => r().logs.some((l) => l['requestId'] === 'rewrite-seen'), performance.now(), 'the access line');
    const line = r().logs.find((l) => l['requestId'] === 'rewrite-seen');
    assert.deepEqual([line?.['model'], line?.['requestedModel'], line?.['rewrite']], [seen.model, 'chat', `${NS}/chat-canary`], 'the access log names the rewrite');

    const total = 10_000;
    let canary = 0;
    let failed = 0;
    const concurrency = 6; // under the low class's share of --admission-max-in-flight: no request is shed here
    // undici's own pool rather than fetch: a tenth of the client's cost per request, on a 2-core host the router shares.
    const client = new Pool(r().traffic, { connections: concurrency });
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < total; i = next++) {
          const answer = await client.request({
            path: '/v1/chat/completions',
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-session-id': `user-${i}` },
            body: '{"model":"chat","messages":[{"role":"user","content":"hi"}]}',
          });
          const text = await answer.body.text();
          if (answer.statusCode !== 200) failed++;
          else if ((JSON.parse(text) as { model: string }).model === 'sim-canary') canary++;
        }
      }),
    );
    await client.close();
    assert.equal(failed, 0);
    const share = canary / total;
    canaryShare = share;
    assert.ok(Math.abs(share - 0.1) <= 0.02, `canary share ${share} (bar 0.10 ± 0.02)`);
    // The same key keeps its target.
    const steady = await ask('chat', { 'x-session-id': 'user-42' });
    for (let i = 0; i < 5; i++) assert.equal((await ask('chat', { 'x-session-id': 'user-42' })).model, steady.model);
    const metrics = await (await fetch(`${r().admin}/metrics`)).text();
    assert.match(metrics, /switchyard_model_rewrites_total\{rewrite="inference\/chat-canary",target="sim-canary"\} \d+/);
  });

  it("an objective's priority sheds the low class first under overload; an unknown objective runs at normal and is counted", async () => {
    for (const [name, priority] of [['critical', 10], ['batch', -10]] as const) {
      await cluster.must('POST', OBJECTIVES, { apiVersion: 'inference.networking.x-k8s.io/v1alpha2', kind: 'InferenceObjective', metadata: { name }, spec: { poolRef: { name: 'pool-a' }, priority } });
    }
    await waitForDebug(r().admin, (doc) => Object.keys((doc as unknown as ExtensionDoc).inferenceExtension.objectives).length === 2, performance.now(), 'objectives in force');
    assert.deepEqual((await debugDocument(r().admin) as unknown as ExtensionDoc).inferenceExtension.objectives, { critical: 'high', batch: 'low' });
    // Overload: 8 slow streams hold the router at 80% of --admission-max-in-flight 10, the low class's cap.
    const slow = Array.from({ length: 8 }, () =>
      fetch(`${r().traffic}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '1500' },
        body: JSON.stringify({ model: 'sim-model', messages: [{ role: 'user', content: 'hold' }] }),
      }).then((res) => res.text()),
    );
    // Router-wide: some of the eight may wait in the router's queue for a new engine's safe start.
    await waitForDebug(r().admin, (doc) => (doc as unknown as { routerInFlight: number }).routerInFlight >= 8, performance.now(), 'eight requests in flight');
    const batch = await ask('sim-model', { 'x-gateway-inference-objective': 'batch' });
    const critical = await ask('sim-model', { 'x-gateway-inference-objective': 'critical' });
    const unknown = await ask('sim-model', { 'x-gateway-inference-objective': 'no-such-objective' });
    await Promise.all(slow);
    assert.equal(batch.status, 429, 'the low class is shed at its share of the cap');
    assert.equal(critical.status, 200, 'the high class still gets through');
    assert.equal(unknown.status, 200, 'an unknown objective runs at normal');
    const metrics = await (await fetch(`${r().admin}/metrics`)).text();
    assert.match(metrics, /switchyard_shed_total\{reason="[a-z_]+",priority="low"\} 1\n/);
    assert.doesNotMatch(metrics, /switchyard_shed_total\{reason="[a-z_]+",priority="(high|normal)"\}/);
    assert.match(metrics, /switchyard_inference_objective_unknown_total 1\n/);
  });

  it('bad shapes: the API refuses what its schema forbids; what it admits but switchyard cannot use gets a clear status, never a crash', async () => {
    const noSelector = await cluster.admin('POST', POOLS, { ...pool('bad', { app: 'x' }, [8000]), spec: { targetPorts: [{ number: 8000 }], endpointPickerRef: { name: 'switchyard', port: { number: 9002 } } } });
    assert.equal(noSelector.status, 422);
    const noPorts = await cluster.admin('POST', POOLS, { ...pool('bad', { app: 'x' }, [8000]), spec: { selector: { matchLabels: { app: 'x' } }, endpointPickerRef: { name: 'switchyard', port: { number: 9002 } } } });
    assert.equal(noPorts.status, 422);
    const unknownField = await cluster.admin('POST', `${POOLS}?fieldValidation=Strict`, { ...pool('bad', { app: 'x' }, [8000]), spec: { ...pool('bad', { app: 'x' }, [8000]).spec, bogus: true } });
    assert.equal(unknownField.status, 400);
    assert.match(JSON.stringify(unknownField.body), /unknown field \\"spec.bogus\\"/);
    // Admitted, then pruned: the router never sees the unknown field.
    assert.equal((await cluster.admin('POST', POOLS, { ...pool('pruned', { app: 'x' }, [8000]), spec: { ...pool('pruned', { app: 'x' }, [8000]).spec, bogus: true } })).status, 201);

    // A pool only at the old version: the source says so.
    await cluster.must('POST', OLD_POOLS, { apiVersion: 'inference.networking.x-k8s.io/v1alpha2', kind: 'InferencePool', metadata: { name: 'pool-old' }, spec: { selector: { app: 'blue' }, targetPortNumber: ports[0], extensionRef: { name: 'switchyard' } } });
    // The v1 watch sees no event for it; the source's next re-list (resync) looks at the old version again.
    const old = async () => (await sources()).find((s) => s.name === 'old')?.pool?.problem ?? '';
    for (let i = 0; i < 400 && !/v1alpha2, which switchyard does not support/.test(await old()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.match(await old(), /exists only at inference.networking.x-k8s.io\/v1alpha2, which switchyard does not support/);

    // An objective the API admits but that names no InferencePool: listed with why, left out.
    await cluster.must('POST', OBJECTIVES, { apiVersion: 'inference.networking.x-k8s.io/v1alpha2', kind: 'InferenceObjective', metadata: { name: 'odd' }, spec: { poolRef: { name: 'pool-a', group: 'example.com', kind: 'Pool' }, priority: 1 } });
    await waitForDebug(
      r().admin,
      (doc) => (doc as unknown as ExtensionDoc).inferenceExtension.watches.some((w) => w.kind === 'InferenceObjective' && w.skipped.some((s) => s.id === `${NS}/odd` && /not an InferencePool/.test(s.reason))),
      performance.now(),
      'the odd objective listed as skipped',
    );
    assert.equal((await ask('sim-model')).status, 200, 'the router keeps serving');
  });

  it('reports how fast routing followed each API write', (t: TestContext) => {
    assert.ok(latencies.length >= 7);
    for (const { event, ms } of latencies) t.diagnostic(`${event}: ${ms.toFixed(0)} ms`);
    if (canaryShare !== undefined) t.diagnostic(`rewrite 90/10: canary share ${canaryShare.toFixed(4)} over 10,000 session keys`);
  });

  it('RBAC: the chart\'s role reads exactly what the sources need; with the verbs removed the API denies them and the router says so', async () => {
    const reads = [`${POOLS}`, `${OBJECTIVES}`, `${REWRITES}`, `/api/v1/namespaces/${NS}/pods`];
    for (const path of reads) assert.equal((await cluster.withToken(token, 'GET', `${path}?watch=1&timeoutSeconds=1`)).status, 200, `watch ${path}`);
    assert.equal((await cluster.withToken(token, 'GET', OLD_POOLS)).status, 200, 'list of the old pools');
    assert.equal((await cluster.withToken(token, 'GET', `${OLD_POOLS}?watch=1&timeoutSeconds=1`)).status, 403, 'no watch of the old pools');
    assert.equal((await cluster.withToken(token, 'POST', POOLS, pool('x', { app: 'x' }, [8000]))).status, 403, 'no writes');
    assert.equal((await cluster.withToken(token, 'PATCH', `${POOLS}/pool-a/status`, {})).status, 403, 'no status writes');

    const role = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/switchyard-discovery-inferencepools`;
    const kept = (await cluster.must('GET', role)) as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    await cluster.must('PUT', role, { ...kept, rules: kept.rules.filter((rule) => rule.apiGroups[0] === '') });
    for (const path of reads.slice(0, 3)) {
      for (let i = 0; i < 100 && (await cluster.withToken(token, 'GET', path)).status !== 403; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal((await cluster.withToken(token, 'GET', path)).status, 403, `list ${path} denied`);
    }
    // The sources' next re-list (resync) meets the denial: reported, and the last good endpoints stay in use.
    await waitForDebug(r().admin, (doc) => doc.discovery.some((d) => d.name === 'default' && !d.healthy && /403/.test(d.error ?? '')), performance.now(), 'the pool source reporting the denial', 15_000);
    assert.equal((await ask('sim-model')).status, 200, 'the last good endpoints stay in use');
    await cluster.must('PUT', role, { ...kept, metadata: { ...(kept as unknown as { metadata: object }).metadata, resourceVersion: undefined } });
    await waitForDebug(r().admin, (doc) => doc.discovery.filter((d) => d.name !== 'old').every((d) => d.healthy), performance.now(), 'healthy again once the verbs are back', 15_000);
  });
});

/**
 * The router process with pod discovery against the fake API server: config
 * (flags + KUBECONFIG), readiness waiting for the first list, traffic to a
 * discovered pod, `/debug/endpoints` and metrics showing the discovery state.
 * The real API server is exercised by e2e/*.e2e.ts (npm run test:k8s).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { FakeKubeApi } from '../../tests/kit/kube/fake-kube-api.ts';
import { pod, podsPath, waitFor, writeKubeconfig } from '../../tests/kit/kube/fixtures.ts';
import { getJson, startRouter, type RouterProcess } from '../../tests/kit/router-process.ts';

interface DiscoveryDebug {
  discovery: { name: string; healthy: boolean; synced: boolean; error: string | null; restarts: Record<string, number>; endpoints: number }[];
  endpoints: { id: string; routable: boolean; models: string[] | null }[];
}

describe('router with pod discovery (fake API server, real router process)', () => {
  const fake = new FakeKubeApi();
  const engine = new EngineSimulator({ model: 'sim-model', knobs: { ttftMs: 0, itlMs: 0 } });
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-router-discovery-'));
  let router: RouterProcess;
  let enginePort = 0;

  before(async () => {
    const server = await fake.listen();
    enginePort = await engine.listen();
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), { server, token: 'router-token', namespace: 'ns' });
    fake.goDown(); // the API is unreachable when the router starts
    router = await startRouter(
      ['--discovery-mode', 'pods', '--discovery-label-selector', 'app=engine', '--discovery-backoff-initial-ms', '20', '--discovery-backoff-max-ms', '50', '--log-level', 'debug'],
      { KUBECONFIG: kubeconfig },
    );
  });

  after(async () => {
    await router?.stop();
    await engine.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not ready until the first successful list, and shows why', async () => {
    const ready = await getJson<{ reason?: string }>(`${router.admin}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal(ready.body.reason, 'discovery not synced');
    await waitFor(() => router.logs.some((l) => l['msg'] === 'Kubernetes API failing; keeping the last endpoint set'), 'failing logged');
    const debug = (await getJson<DiscoveryDebug>(`${router.admin}/debug/endpoints`)).body;
    assert.equal(debug.discovery[0]?.name, 'default');
    assert.equal(debug.discovery[0]?.synced, false);
    assert.equal(debug.discovery[0]?.healthy, false);
    assert.match(debug.discovery[0]?.error ?? '', /ECONNRESET|socket|closed|terminated/i);
  });

  it('becomes ready once the API answers, finds the pod and its models, and routes to it', async () => {
    fake.put(podsPath('ns'), pod('engine-0', { ip: '127.0.0.1', port: enginePort }));
    fake.comeBack();
    await waitFor(() => router.logs.some((l) => l['msg'] === 'discovery synced (first list done)'), 'synced', 5_000);
    assert.equal((await getJson(`${router.admin}/readyz`)).status, 200);
    let debug: DiscoveryDebug | undefined;
    for (let i = 0; i < 200 && !debug?.endpoints[0]?.routable; i++) {
      debug = (await getJson<DiscoveryDebug>(`${router.admin}/debug/endpoints`)).body;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(debug?.endpoints.map((e) => [e.id, e.routable, e.models]), [['ns/engine-0', true, ['sim-model']]]);
    assert.equal(debug?.discovery[0]?.healthy, true);
    const response = await fetch(`${router.traffic}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    assert.ok(fake.requests.every((r) => r.authorization === 'Bearer router-token'), 'the kubeconfig token is used');
    const metrics = await (await fetch(`${router.admin}/metrics`)).text();
    assert.match(metrics, /switchyard_discovery_up\{source="default",kind="pods",namespace="ns"\} 1/);
    assert.match(metrics, /switchyard_discovery_restarts_total\{source="default",reason="error"\} [1-9]/);
    assert.match(metrics, /switchyard_discovery_endpoints\{source="default"\} 1/);
  });

  it('a pod patched not ready stops taking new requests (503) within a second', async () => {
    const started = Date.now();
    fake.put(podsPath('ns'), pod('engine-0', { ip: '127.0.0.1', port: enginePort, ready: false }));
    let status = 0;
    while (Date.now() - started < 1_000) {
      const response = await fetch(`${router.traffic}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      status = response.status;
      await response.arrayBuffer();
      if (status === 503) break;
    }
    assert.equal(status, 503);
  });
});

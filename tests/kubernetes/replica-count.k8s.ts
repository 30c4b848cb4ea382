/**
 * The router counts its own replicas from its Service's EndpointSlices,
 * against a real kube-apiserver (built from source, RBAC on), with exactly
 * the rights the chart grants (discovery/kubernetes/rbac/endpointslices.yaml
 * in the router's own namespace), and takes its safe-start share of an
 * engine by that count. The engine is a simulator on loopback given as a
 * static backend (the router's own slices may list any address: nothing
 * connects to them); nothing fills slices here (no controller-manager), so
 * the test writes them as the EndpointSlice controller would, through a
 * rollout: a surge pod appears, an old one terminates.
 *
 * Run: npm run test:k8s.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRouter, type RouterProcess } from '../kit/router-process.ts';
import { Cluster, debugDocument, RBAC_DIR, waitForDebug } from '../kit/kube/cluster.ts';

const NS = 'routers';
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
const MODEL = 'count-model';

describe("router replicas counted from the router's own Service (real kube-apiserver)", { timeout: 600_000 }, () => {
  let cluster: Cluster | undefined;
  let router: RouterProcess | undefined;
  let engine: EngineSimulator | undefined;
  let serviceUid = '';
  const holders = new Agent({ connections: 100 });
  const release = new AbortController();

  const api = () => cluster as Cluster;
  const admin = () => (router as RouterProcess).admin;
  const view = () => debugDocument(admin());
  const waitFor = (condition: Parameters<typeof waitForDebug>[1], what: string) => waitForDebug(admin(), condition, performance.now(), what);

  /** The router Service's slice as the EndpointSlice controller writes it: one entry per pod. */
  function slice(pods: { name: string; ready?: boolean; terminating?: boolean }[]) {
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'switchyard-x1',
        labels: { 'kubernetes.io/service-name': 'switchyard', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'switchyard', uid: serviceUid, controller: true, blockOwnerDeletion: true }],
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: pods.map((pod, i) => ({
        addresses: [`10.252.0.${i + 10}`],
        conditions: { ready: pod.ready ?? true, serving: pod.ready ?? true, terminating: pod.terminating ?? false },
        targetRef: { kind: 'Pod', name: pod.name, namespace: NS },
      })),
    };
  }

  before(async () => {
    // Room for every stream: the scrape shows them running, never queued.
    engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 1_000_000, ttftMs: 5, itlMs: 500, outputTokens: 200 } });
    await engine.listen();
    cluster = await Cluster.start();
    await api().must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const service = (await api().must('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'switchyard' },
      spec: { ports: [{ name: 'http', port: 8080, targetPort: 8080 }] },
    })) as { metadata: { uid: string } };
    serviceUid = service.metadata.uid;
    await api().applyFile(join(RBAC_DIR, 'serviceaccount.yaml'), NS);
    await api().applyFile(join(RBAC_DIR, 'endpointslices.yaml'), NS, (object) => {
      for (const subject of (object['subjects'] as { namespace: string }[] | undefined) ?? []) subject.namespace = NS;
    });
    const kubeconfig = join(api().dir, 'router-kubeconfig');
    api().writeKubeconfig(kubeconfig, await api().token(NS, 'switchyard'), NS);
    router = await startRouter(['--kubeconfig', kubeconfig, '--backend', engine.url, '--load-replicas-from-service', 'switchyard', '--scrape-interval-ms', '200']);
  });

  after(async () => {
    release.abort();
    await router?.stop();
    await holders.close();
    await engine?.close();
    await cluster?.destroy();
  });

  it('counts the pods of its Service that are not terminating, and follows a rollout', async () => {
    await waitFor((doc) => doc.replicas?.watch?.synced === true, 'first list of the Service slices');
    await api().must('POST', SLICES, slice([{ name: 'router-a' }, { name: 'router-b' }, { name: 'router-c', ready: false }]));
    await waitFor((doc) => doc.replicas?.count === 3, 'three pods counted (one still starting)');
    assert.equal((await view()).replicas?.source, 'service');
  });

  it('takes its share of what the engine is seen running without a queue, by the count now', async () => {
    // 60 long streams straight to the engine: the other replicas' traffic, as the scrape sees it.
    for (let i = 0; i < 60; i++) {
      void request(`${(engine as EngineSimulator).url}/v1/chat/completions`, {
        method: 'POST',
        dispatcher: holders,
        signal: release.signal,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hold' }] }),
      })
        .then((response) => response.body.dump())
        .catch(() => undefined);
    }
    await waitFor((doc) => doc.endpoints[0]?.load.safeStart?.limit === 20, 'a third of 60 running');
    assert.equal((await view()).endpoints[0]?.load.safeStart?.reason, 'replica-share');
    // An old pod terminates: two replicas share the engine now.
    await api().must('PATCH', `${SLICES}/switchyard-x1`, { endpoints: slice([{ name: 'router-a', terminating: true }, { name: 'router-b' }, { name: 'router-c' }]).endpoints }, 'application/merge-patch+json');
    await waitFor((doc) => doc.replicas?.count === 2, 'the terminating pod no longer counted');
    await waitFor((doc) => doc.endpoints[0]?.load.safeStart?.limit === 30, 'half of 60 running');
  });
});

/**
 * The chart against a real kube-apiserver + etcd (built from source and cached
 * by tests/kit/kube/apiserver/build.sh; no kubelet, scheduler or
 * controllers), with the prometheus-operator CRDs and the Gateway API's
 * HTTPRoute CRD applied first so ServiceMonitor, PodMonitor, PrometheusRule
 * and HTTPRoute objects meet their real schemas:
 * - `helm install` and `helm upgrade` of every values file of the CI matrix;
 * - the rendered pod template created as a Pod in a namespace that enforces
 *   the restricted Pod Security Standard (and a weakened copy refused);
 * - the admitted router Pod run on this machine (cluster/pod-runner.ts): its
 *   rendered command, args and env, in its own network namespace, as its
 *   non-root uid, with the chart's ConfigMap and admin-token Secret mounted
 *   read-only and a TokenRequest token for the chart's ServiceAccount; the
 *   rendered probes answer at their paths and named ports, it discovers
 *   simulator pods in another namespace through the chart's RBAC, routes a
 *   streamed request, and drains within the rendered grace period;
 * - `helm test`: the hook Pod created by helm, its command run here against
 *   the router through the Service name, its phase reported back.
 *
 * Run: npm run test:chart:cluster (builds or reuses kube-apiserver, etcd, helm).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { fileURLToPath } from 'node:url';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { Cluster } from '../kit/kube/cluster.ts';
import { CHART, ciValuesFiles, helm, helmBinary } from '../kit/helm/helm.ts';
import { crane, dockerfileImageConfig, pulledImageConfig, pushRouterImage, startRegistry, unpackImage, type LocalRegistry } from '../kit/image-registry.ts';
import { HOST_ADDRESS, POD_ADDRESS, PodNetwork } from './pod-network.ts';
import { runContainer, type ContainerLike, type ContainerRun, type PodLike, type UnpackedImage, type VolumeContent } from './pod-runner.ts';

/** The CRDs the chart's optional objects are checked against: each set's fetch script, API group and plural kinds. */
const CRD_SETS = [
  { script: fileURLToPath(new URL('../../charts/tools/prometheus-operator-crds.sh', import.meta.url)), group: 'monitoring.coreos.com', kinds: ['servicemonitors', 'podmonitors', 'prometheusrules'] },
  { script: fileURLToPath(new URL('../../charts/tools/gateway-api-crds.sh', import.meta.url)), group: 'gateway.networking.k8s.io', kinds: ['httproutes'] },
];
const RELEASE_NS = 'switchyard';
const ENGINE_NS = 'inference';
const NODE = 'e2e-node';
const ADMIN_TOKEN = 'e2e-admin-token-0123456789';
const APP_VERSION = /^appVersion: "?([^"\n]+)"?$/m.exec(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))?.[1] as string;

interface PodObject extends PodLike {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodLike['spec'] & {
    serviceAccountName?: string;
    terminationGracePeriodSeconds?: number;
    containers: (ContainerLike & { ports?: { name: string; containerPort: number }[]; startupProbe?: Probe; livenessProbe?: Probe; readinessProbe?: Probe })[];
    volumes?: Volume[];
  };
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Volume {
  name: string;
  configMap?: { name: string; defaultMode?: number };
  secret?: { secretName: string; defaultMode?: number; items?: { key: string; path: string }[] };
  projected?: { defaultMode?: number; sources: { serviceAccountToken?: { path: string }; configMap?: { items: { key: string; path: string }[] }; downwardAPI?: { items: { path: string; fieldRef: { fieldPath: string } }[] } }[] };
  emptyDir?: unknown;
}

describe('chart in a real kube-apiserver', { timeout: 900_000 }, () => {
  let cluster: Cluster;
  let kubeconfig = '';
  const kube = (args: string[]) => helm([...args, '--kubeconfig', kubeconfig]);

  before(async () => {
    helmBinary(); // build or find helm before the apiserver runs
    cluster = await Cluster.start();
    kubeconfig = join(cluster.dir, 'kubeconfig');
    for (const { script, group, kinds } of CRD_SETS) {
      const crds = /^CRDS=(.+)$/m.exec(execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 }))?.[1];
      assert.ok(crds, `${script} printed CRDS=`);
      for (const kind of kinds) {
        const crd = parseAllDocuments(readFileSync(join(crds, `${group}_${kind}.yaml`), 'utf8'))[0]?.toJS() as unknown;
        await cluster.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
        await waitFor(`CRD ${kind} established`, async () => {
          const got = (await cluster.must('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${kind}.${group}`)) as { status?: { conditions?: { type: string; status: string }[] } };
          return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true;
        });
      }
    }
    // Namespaces the CI values watch; no controller-manager, so each gets its `default` service account by hand.
    for (const ns of [ENGINE_NS, 'team-b', 'shared-models']) await createNamespace(ns);
    await cluster.must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
  });

  after(async () => {
    await cluster?.destroy();
  });

  async function createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    await cluster.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    await cluster.must('POST', `/api/v1/namespaces/${name}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  }

  it('helm install and helm upgrade of every CI values file pass the API server\'s validation', async (t) => {
    const timings: string[] = [];
    for (const file of ciValuesFiles()) {
      const release = basename(file).replace(/-values\.yaml$/, '');
      const ns = `ci-${release}`;
      const started = performance.now();
      const install = await kube(['install', release, CHART, '--namespace', ns, '--create-namespace', '--values', file]);
      assert.equal(install.code, 0, `${release}: install: ${install.stderr}`);
      const checksum = async () => ((await cluster.must('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${release}-switchyard`)) as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template.metadata.annotations['checksum/config'];
      const before = await checksum();
      const upgrade = await kube(['upgrade', release, CHART, '--namespace', ns, '--values', file, '--set', 'config.logLevel=debug']);
      assert.equal(upgrade.code, 0, `${release}: upgrade: ${upgrade.stderr}`);
      assert.notEqual(await checksum(), before, `${release}: the config change rolls the pods`);
      timings.push(`${release} ${Math.round(performance.now() - started)} ms`);
    }
    // The monitoring objects exist, admitted by the CRDs' schemas; so do the Ingress and the HTTPRoute.
    for (const kind of ['servicemonitors', 'podmonitors', 'prometheusrules']) {
      await cluster.must('GET', `/apis/monitoring.coreos.com/v1/namespaces/ci-monitoring/${kind}/monitoring-switchyard`);
    }
    await cluster.must('GET', '/apis/networking.k8s.io/v1/namespaces/ci-ingress/ingresses/ingress-switchyard');
    await cluster.must('GET', '/apis/gateway.networking.k8s.io/v1/namespaces/ci-ingress/httproutes/ingress-switchyard');
    const roles = (await cluster.must('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/team-b/roles')) as { items: { metadata: { name: string } }[] };
    assert.ok(roles.items.some((r) => r.metadata.name === 'multi-namespace-switchyard-discovery'), 'a Role in a watched namespace');
    t.diagnostic(`install + upgrade: ${timings.join(', ')}`);
  });

  it('the CRD schemas are enforced: a ServiceMonitor with a malformed endpoint is refused', async () => {
    const answer = await cluster.admin('POST', `/apis/monitoring.coreos.com/v1/namespaces/ci-monitoring/servicemonitors`, {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'malformed' },
      spec: { selector: {}, endpoints: [{ port: 'admin', interval: 'every minute' }] },
    });
    assert.equal(answer.status, 422, JSON.stringify(answer.body));
  });

  describe('the router release in a namespace enforcing restricted Pod Security', () => {
    const release = 'sy';
    let template: PodObject;
    let admitted: PodObject;
    let registry: LocalRegistry | undefined;
    let rootfs: string | undefined;
    let network: PodNetwork | undefined;
    let routerRun: ContainerRun | undefined;
    const sims: EngineSimulator[] = [];

    // The release artifacts, short of GitHub: the image assembled from the Dockerfile's tree and the
    // chart packaged by the release script, pushed to a local registry and pulled back; the pulled
    // chart is what gets installed and the pulled image's file system is what the pods run.
    /** What the release steps printed, told by the router test (a suite hook has no diagnostics). */
    const releaseNotes: string[] = [];
    const t = { diagnostic: (line: string) => releaseNotes.push(line) };

    before(async () => {
      await createNamespace(RELEASE_NS, { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' });
      await cluster.must('POST', `/api/v1/namespaces/${RELEASE_NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sy-admin' }, stringData: { token: ADMIN_TOKEN } });
      registry = await startRegistry();
      const image = `${registry.address}/switchyard`;
      const pushed = pushRouterImage(registry, APP_VERSION);
      const chart = await releaseChart(image, registry.address, t);
      t.diagnostic(`image ${pushed.ref} ${pushed.digest}; chart ${chart.reference} ${chart.digest}`);
      const config = pulledImageConfig(`${image}@${pushed.digest}`);
      assert.deepEqual([config.Entrypoint, config.Cmd, config.User], [['/nodejs/bin/node', '--max-old-space-size=384', '/app/router/cli/bin.ts'], ['serve'], '65532:65532'], 'the pulled image runs the CLI as nonroot');
      await readmeInstall(image, registry.address, chart.version);
      const values = [
        '--set-json',
        `config.discovery={"mode":"pods","labelSelector":"app=vllm","namespace":"${ENGINE_NS}"}`,
        '--set-json',
        'config.lifecycle={"preStopDelayMs":1000,"drainTimeoutMs":2000}',
        '--set-json',
        'config.scrape={"intervalMs":250}',
        '--set-json',
        'secrets.adminToken={"existingSecret":"sy-admin","key":"token"}',
      ];
      const install = await kube(['install', release, chart.pulled, '--namespace', RELEASE_NS, ...values]);
      assert.equal(install.code, 0, install.stderr);
      const deployment = (await cluster.must('GET', `/apis/apps/v1/namespaces/${RELEASE_NS}/deployments/${release}-switchyard`)) as { spec: { template: PodObject & { spec: { containers: { image?: string }[] } } } };
      template = deployment.spec.template;
      const named = deployment.spec.template.spec.containers[0]?.image;
      assert.equal(named, `${image}:${APP_VERSION}`, "the pulled chart's default image is the pushed one, tagged with its appVersion");
      assert.equal(crane(['digest', named]).trim(), pushed.digest, 'the tag the chart names resolves to the pushed digest');
      rootfs = unpackImage(`${image}@${pushed.digest}`);
    });

    after(async () => {
      await routerRun?.stop('SIGKILL');
      await network?.destroy();
      await Promise.all(sims.map((sim) => sim.close()));
      await registry?.stop();
      if (rootfs !== undefined) rmSync(rootfs, { recursive: true, force: true });
    });

    it('the rendered pod template is admitted as a Pod under restricted Pod Security; a weakened copy is refused', async () => {
      const weakened = structuredClone(template);
      delete weakened.spec.securityContext;
      for (const c of weakened.spec.containers) delete c.securityContext;
      const refused = await cluster.admin('POST', `/api/v1/namespaces/${RELEASE_NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'weakened' }, spec: weakened.spec });
      assert.equal(refused.status, 403, 'the namespace enforces restricted');
      assert.match((refused.body as { message: string }).message, /violates PodSecurity "restricted:latest"/);
      admitted = (await cluster.must('POST', `/api/v1/namespaces/${RELEASE_NS}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${release}-switchyard-template`, labels: template.metadata.labels, annotations: template.metadata.annotations },
        spec: template.spec,
      })) as PodObject;
      assert.ok(admitted.spec.volumes?.some((v) => v.projected !== undefined), 'the service account token volume was added (discovery needs it)');
    });

    it('the router Pod runs its rendered command: probes answer, it discovers engines through the chart RBAC, routes a stream, drains in the grace period', async (t) => {
      assert.ok(admitted, 'the pod template was admitted');
      for (const line of releaseNotes) t.diagnostic(line);
      const { host, port } = cluster.hostPort;
      network = await PodNetwork.create(Number(port));
      assert.equal(host, '127.0.0.1');
      const container = admitted.spec.containers[0];
      assert.ok(container);
      routerRun = runContainer({
        pod: admitted,
        container: container.name,
        image: unpackedImage(),
        volumes: await volumeContents(admitted),
        netns: network.netns,
        env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port },
      });
      const portOf = (probe: Probe | undefined) => {
        assert.ok(probe, 'probe rendered');
        const named = container.ports?.find((p) => p.name === probe.httpGet.port)?.containerPort;
        return `http://${POD_ADDRESS}:${named ?? probe.httpGet.port}${probe.httpGet.path}`;
      };
      const startup = portOf(container.startupProbe);
      await waitFor('the startup probe answers 200', async () => (await status(startup)) === 200, 30_000, () => routerRun?.output() ?? '');
      assert.equal(await status(portOf(container.livenessProbe)), 200);
      await waitFor('the readiness probe answers 200 (first list of pods done)', async () => (await status(portOf(container.readinessProbe))) === 200, 30_000, () => routerRun?.output() ?? '');
      assert.deepEqual([container.startupProbe?.httpGet.path, container.livenessProbe?.httpGet.path, container.readinessProbe?.httpGet.path], ['/livez', '/livez', '/readyz']);

      // Engine pods in another namespace, IPs on the host side of the pod network.
      for (const name of ['engine-a', 'engine-b']) {
        const sim = new EngineSimulator({ model: 'sim-model', knobs: { ttftMs: 0, itlMs: 1, outputTokens: 5 } });
        sims.push(sim);
        const simPort = await sim.listen(HOST_ADDRESS, 0);
        await cluster.must('POST', `/api/v1/namespaces/${ENGINE_NS}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels: { app: 'vllm' } },
          spec: { nodeName: NODE, automountServiceAccountToken: false, containers: [{ name: 'vllm', image: 'example.invalid/vllm:1', ports: [{ name: 'http', containerPort: simPort }] }] },
        });
        await cluster.must('PATCH', `/api/v1/namespaces/${ENGINE_NS}/pods/${name}/status`, { status: { phase: 'Running', podIP: HOST_ADDRESS, podIPs: [{ ip: HOST_ADDRESS }], conditions: [{ type: 'Ready', status: 'True' }] } }, 'application/merge-patch+json');
      }
      const http = container.ports?.find((p) => p.name === 'http')?.containerPort;
      const traffic = `http://${POD_ADDRESS}:${http}`;
      const admin = `http://${POD_ADDRESS}:${container.ports?.find((p) => p.name === 'admin')?.containerPort}`;
      const routable = async () => {
        const debug = await fetch(`${admin}/debug/endpoints`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        return ((await debug.json()) as { endpoints: { id: string; routable: boolean }[] }).endpoints.filter((e) => e.routable).map((e) => e.id).sort();
      };
      await waitFor('both engine pods routable', async () => (await routable()).length === 2, 30_000, () => routerRun?.output() ?? '');
      assert.deepEqual(await routable(), [`${ENGINE_NS}/engine-a`, `${ENGINE_NS}/engine-b`]);
      const models = (await (await fetch(`${traffic}/v1/models`)).json()) as { data: { id: string }[] };
      assert.deepEqual(models.data.map((m) => m.id), ['sim-model']);
      // The router's own Service's slice, as the EndpointSlice controller writes it (none runs here): this
      // pod and a second replica still starting. The chart's Role lets the router count them.
      const routerService = (await cluster.must('GET', `/api/v1/namespaces/${RELEASE_NS}/services/${release}-switchyard`)) as { metadata: { uid: string } };
      await cluster.must('POST', `/apis/discovery.k8s.io/v1/namespaces/${RELEASE_NS}/endpointslices`, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${release}-switchyard-x1`,
          labels: { 'kubernetes.io/service-name': `${release}-switchyard`, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: `${release}-switchyard`, uid: routerService.metadata.uid, controller: true }],
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: http }],
        endpoints: [
          { addresses: [POD_ADDRESS], conditions: { ready: true }, targetRef: { kind: 'Pod', name: `${release}-switchyard-template`, namespace: RELEASE_NS } },
          { addresses: ['10.253.9.9'], conditions: { ready: false }, targetRef: { kind: 'Pod', name: `${release}-switchyard-next`, namespace: RELEASE_NS } },
        ],
      });
      const replicas = async () => ((await (await fetch(`${admin}/debug/endpoints`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { replicas: { count: number | null; source: string } }).replicas;
      await waitFor('the router counts two replicas from its Service', async () => (await replicas()).count === 2, 30_000, () => routerRun?.output() ?? '');
      assert.equal((await replicas()).source, 'service');
      assert.equal((await fetch(`${admin}/metrics`)).status, 401, 'the admin token from the Secret guards /metrics');
      assert.equal((await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 200);

      const stream = await fetch(`${traffic}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-model', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
      });
      const text = await stream.text();
      assert.equal(stream.status, 200, text);
      assert.match(text, /^data: \{/);
      assert.ok(text.trimEnd().endsWith('data: [DONE]'), 'the stream completed');
      assert.equal(sims.reduce((n, sim) => n + sim.requests, 0), 1, 'one engine served it');

      await helmTest(t, release, admitted.spec.containers[0]?.ports ?? []);

      // SIGTERM: readiness fails, the pre-stop delay and drain run, exit 0 within the rendered grace period.
      const grace = admitted.spec.terminationGracePeriodSeconds ?? 30;
      assert.equal(grace, 1 + 2 + 5);
      const stopped = performance.now();
      routerRun.child.kill('SIGTERM');
      const code = await Promise.race([routerRun.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), grace * 1000))]);
      assert.equal(code, 0, `exit status within ${grace} s: ${routerRun.output().slice(-2000)}`);
      t.diagnostic(`router drained and exited ${Math.round(performance.now() - stopped)} ms after SIGTERM (grace ${grace} s)`);
    });

    /** The pulled image's file system, with the config the Dockerfile gives it. */
    function unpackedImage(): UnpackedImage {
      assert.ok(rootfs, 'the pulled image was unpacked');
      const config = dockerfileImageConfig();
      return { rootfs, env: config.env, user: Number(config.user.split(':')[0]), workingDir: config.workdir };
    }

    /** Packages the chart with the release script, pushes it to the registry, pulls it back; the pulled .tgz and its reference. */
    async function releaseChart(image: string, address: string, t: Pick<TestContext, 'diagnostic'>): Promise<{ pulled: string; reference: string; version: string; digest: string }> {
      const dist = mkdtempSync(join(tmpdir(), 'switchyard-chart-'));
      const packaged = execFileSync('bash', [fileURLToPath(new URL('../../.github/release/package-chart.sh', import.meta.url)), image, join(dist, 'packaged'), helmBinary()], { encoding: 'utf8' }).trim();
      const push = await kube(['push', packaged, `oci://${address}/charts`, '--plain-http']);
      assert.equal(push.code, 0, push.stderr);
      const digest = /^Digest: (\S+)$/m.exec(`${push.stdout}${push.stderr}`)?.[1] ?? '';
      const version = /^version: (.+)$/m.exec(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'))?.[1] as string;
      const reference = `oci://${address}/charts/switchyard`;
      mkdirSync(join(dist, 'pulled'));
      const pull = await kube(['pull', reference, '--version', version, '--plain-http', '--destination', join(dist, 'pulled')]);
      assert.equal(pull.code, 0, pull.stderr);
      const pulled = join(dist, 'pulled', `switchyard-${version}.tgz`);
      assert.ok(readFileSync(pulled).equals(readFileSync(packaged)), 'the pulled chart is byte for byte the pushed one');
      t.diagnostic(`helm push: ${`${push.stdout}${push.stderr}`.trim().replace(/\n/g, ' | ')}`);
      return { pulled, reference, version, digest };
    }

    /** The README's install command, run as written with only the registry replaced by the local one (and plain HTTP to it). */
    async function readmeInstall(image: string, address: string, version: string): Promise<void> {
      const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8').replace(/\\\n\s*/g, '');
      const line = /^helm install .*$/m.exec(readme)?.[0];
      assert.ok(line?.includes(`--version ${version}`), `the README installs chart ${version}: ${line}`);
      const dir = mkdtempSync(join(tmpdir(), 'switchyard-readme-'));
      writeFileSync(join(dir, 'my-values.yaml'), 'config:\n  backends: [http://vllm.inference.svc:8000]\n');
      const args = (line as string)
        .replace('oci://ghcr.io/switchyard/', `oci://${address}/`)
        .split(/\s+/)
        .slice(1)
        .map((arg) => (arg === 'my-values.yaml' ? join(dir, arg) : arg));
      const run = await helm([...args, '--plain-http', '--kubeconfig', kubeconfig]);
      assert.equal(run.code, 0, `${line}: ${run.stderr}`);
      const deployment = (await cluster.must('GET', `/apis/apps/v1/namespaces/switchyard/deployments/switchyard`)) as { spec: { template: { spec: { containers: { image: string }[] } } } };
      assert.equal(deployment.spec.template.spec.containers[0]?.image, `${image}:${APP_VERSION}`);
      rmSync(dir, { recursive: true, force: true });
    }

    /** `helm test`: helm creates the hook Pod (restricted PSA applies); its command runs here; its phase goes back to the API. */
    async function helmTest(t: TestContext, name: string, ports: { name: string; containerPort: number }[]): Promise<void> {
      const test = spawn(helmBinary(), ['test', name, '--namespace', RELEASE_NS, '--kubeconfig', kubeconfig, '--timeout', '120s'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      test.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      test.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number>((resolve) => test.once('exit', (code) => resolve(code ?? 1)));
      const hookName = `${name}-switchyard-test-check`;
      let hook: PodObject | undefined;
      await waitFor('helm test created the hook Pod', async () => {
        const answer = await cluster.admin('GET', `/api/v1/namespaces/${RELEASE_NS}/pods/${hookName}`);
        if (answer.status === 200) hook = answer.body as PodObject;
        return hook !== undefined;
      }, 60_000, () => output);
      assert.ok(hook);
      // No kube-proxy or DNS here: the Service names resolve to the router pod, whose ports equal the Services'.
      const servicePorts: string[] = [];
      for (const service of [`${name}-switchyard`, `${name}-switchyard-admin`]) {
        const found = (await cluster.must('GET', `/api/v1/namespaces/${RELEASE_NS}/services/${service}`)) as { spec: { ports: { name: string; port: number }[] } };
        for (const p of found.spec.ports) assert.equal(p.port, ports.find((c) => c.name === p.name)?.containerPort, `${service} port ${p.name} = container port`);
        servicePorts.push(...found.spec.ports.map((p) => `${service}:${p.name}`));
      }
      assert.deepEqual(servicePorts, [`${name}-switchyard:http`, `${name}-switchyard-admin:admin`]);
      const check = runContainer({
        pod: hook,
        container: 'check',
        image: unpackedImage(),
        volumes: await volumeContents(hook),
        hosts: `127.0.0.1 localhost\n${POD_ADDRESS} ${name}-switchyard.${RELEASE_NS}.svc ${name}-switchyard.${RELEASE_NS}.svc.cluster.local ${name}-switchyard-admin.${RELEASE_NS}.svc ${name}-switchyard-admin.${RELEASE_NS}.svc.cluster.local\n`,
      });
      const code = await check.exited;
      const checkOutput = check.output();
      await check.stop();
      t.diagnostic(`helm test hook (switchyard check), exit ${code}: ${checkOutput.trim().replace(/\n/g, ' | ')}`);
      assert.equal(code, 0, checkOutput);
      assert.match(checkOutput, /^ok {3}http:\/\/sy-switchyard-admin\.switchyard\.svc:9090\/readyz 200/m);
      assert.match(checkOutput, /^ok {3}http:\/\/sy-switchyard\.switchyard\.svc:8080\/v1\/models 200 1 model/m);
      await cluster.must('PATCH', `/api/v1/namespaces/${RELEASE_NS}/pods/${hookName}/status`, { status: { phase: 'Succeeded' } }, 'application/merge-patch+json');
      assert.equal(await exited, 0, output);
      assert.match(output, /Phase:\s+Succeeded/);
    }
  });

  /** What the kubelet would put in each volume of `pod`, read from the API. */
  async function volumeContents(pod: PodObject): Promise<Record<string, VolumeContent>> {
    const ns = pod.metadata.namespace ?? RELEASE_NS;
    const out: Record<string, VolumeContent> = {};
    for (const volume of pod.spec.volumes ?? []) {
      if (volume.emptyDir !== undefined) out[volume.name] = 'emptyDir';
      else if (volume.configMap !== undefined) {
        const map = (await cluster.must('GET', `/api/v1/namespaces/${ns}/configmaps/${volume.configMap.name}`)) as { data: Record<string, string> };
        out[volume.name] = { files: Object.fromEntries(Object.entries(map.data).map(([k, v]) => [k, { content: v, mode: volume.configMap?.defaultMode ?? 0o644 }])) };
      } else if (volume.secret !== undefined) {
        const secret = (await cluster.must('GET', `/api/v1/namespaces/${ns}/secrets/${volume.secret.secretName}`)) as { data: Record<string, string> };
        const items = volume.secret.items ?? Object.keys(secret.data).map((key) => ({ key, path: key }));
        out[volume.name] = { files: Object.fromEntries(items.map((i) => [i.path, { content: Buffer.from(secret.data[i.key] ?? '', 'base64').toString(), mode: volume.secret?.defaultMode ?? 0o644 }])) };
      } else if (volume.projected !== undefined) {
        const files: Record<string, { content: string; mode: number }> = {};
        const mode = volume.projected.defaultMode ?? 0o644;
        for (const source of volume.projected.sources) {
          // The TokenRequest the kubelet makes for the pod's service account.
          if (source.serviceAccountToken !== undefined) files[source.serviceAccountToken.path] = { content: await cluster.token(ns, pod.spec.serviceAccountName ?? 'default'), mode };
          // kube-root-ca.crt is published by a controller that does not run here: the cluster CA itself.
          for (const item of source.configMap?.items ?? []) files[item.path] = { content: cluster.ca, mode };
          for (const item of source.downwardAPI?.items ?? []) {
            assert.equal(item.fieldRef.fieldPath, 'metadata.namespace');
            files[item.path] = { content: ns, mode };
          }
        }
        out[volume.name] = { files };
      } else throw new Error(`volume ${volume.name}: kind not emulated`);
    }
    return out;
  }
});

/** The router image's layout (the Dockerfile's), made from this checkout. */

async function status(url: string): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs = 30_000, detail: () => string = () => ''): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}\n${detail().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

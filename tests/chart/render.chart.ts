/**
 * `helm lint --strict` and `helm template` over the values matrix
 * (charts/switchyard/ci/*-values.yaml and the defaults), with assertions on
 * what operators rely on and peer charts got wrong: a pinned image, a memory
 * limit above the request, probes on the admin port (liveness and readiness
 * apart), only get/list/watch and nothing cluster-wide, a ConfigMap the router
 * itself accepts with no secret in it, a grace period that covers the drain.
 *
 * Run: npm run test:chart (builds helm once, then uses the cached binary).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadConfig } from '../../router/config/load.ts';
import { configSchema } from '../../router/config/schema.ts';
import { CHART, ciValuesFiles, helm, KUBE_VERSION, only, template, templateArgs, type K8sObject, type TemplateOptions } from '../kit/helm/helm.ts';

const APP_VERSION = (parse(readFileSync(`${CHART}/Chart.yaml`, 'utf8')) as { appVersion: string }).appVersion;

/** The pieces of a pod spec the assertions read. */
interface Container {
  name: string;
  image: string;
  imagePullPolicy: string;
  command: string[];
  args: string[];
  ports?: { name: string; containerPort: number }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: unknown;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown> & { capabilities?: { drop?: string[] } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  exec?: unknown;
  timeoutSeconds?: number;
  failureThreshold?: number;
}
interface PodSpec {
  containers: Container[];
  securityContext: Record<string, unknown>;
  automountServiceAccountToken?: boolean;
  enableServiceLinks?: boolean;
  initContainers?: Container[];
  serviceAccountName?: string;
  terminationGracePeriodSeconds?: number;
  topologySpreadConstraints?: { topologyKey: string; whenUnsatisfiable: string }[];
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string; items: { key: string; path: string }[] } }[];
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const podSpec = (objects: K8sObject[]) => ((only(objects, 'Deployment')['spec'] as { template: { spec: PodSpec } }).template.spec);
const router = (objects: K8sObject[]) => podSpec(objects).containers.find((c) => c.name === 'router') as Container;
/** One egress rule of the chart's NetworkPolicy. */
type EgressRule = { to?: unknown[]; ports?: { port: number | string; protocol?: string }[] };
const egressOf = (objects: K8sObject[]) => (only(objects, 'NetworkPolicy')['spec'] as { egress: EgressRule[] }).egress;
const renderedConfig = (objects: K8sObject[]) => (only(objects, 'ConfigMap', 'sy-switchyard')['data'] as Record<string, string>)['config.yaml'] as string;

/** Bytes of a Kubernetes memory quantity (Ki, Mi, Gi, k, M, G or plain). */
function bytes(quantity: string): number {
  const match = /^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity);
  assert.ok(match, `memory quantity ${quantity}`);
  const units: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(match[1]) * (match[2] === undefined ? 1 : (units[match[2]] as number));
}

/** The router's own defaults for the lifecycle (what the chart falls back to). */
const LIFECYCLE_DEFAULTS = configSchema.parse({}).lifecycle;

/** Values that turn the replica count from the chart's Service off: the router then reads no API with static discovery. */
const NO_REPLICA_COUNT = 'replicaCountFromService=false';

describe('chart: helm lint --strict and helm template over the values matrix', { timeout: 600_000 }, () => {
  const cases: { name: string; options: TemplateOptions; values: Record<string, unknown> }[] = [
    { name: 'defaults', options: {}, values: {} },
    ...ciValuesFiles().map((file) => ({ name: basename(file), options: { valuesFiles: [file] }, values: parse(readFileSync(file, 'utf8')) as Record<string, unknown> })),
  ];
  const rendered = new Map<string, K8sObject[]>();
  let scratch = '';

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-chart-'));
    for (const c of cases) rendered.set(c.name, await template(c.options));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('the matrix covers static, pods, endpointslices, InferencePools, several namespaces, HPA, NetworkPolicy, monitoring, Redis, Ingress and HTTPRoute', () => {
    const names = cases.map((c) => c.name);
    for (const wanted of ['static', 'pods', 'endpointslices', 'inferencepool', 'multi-namespace', 'hpa', 'networkpolicy', 'monitoring', 'redis', 'ingress']) {
      assert.ok(names.includes(`${wanted}-values.yaml`), `ci/${wanted}-values.yaml exists`);
    }
  });

  it('helm lint --strict passes for the defaults and every values file', async () => {
    for (const c of cases) {
      const args = ['lint', '--strict', CHART, '--kube-version', KUBE_VERSION, ...(c.options.valuesFiles ?? []).flatMap((f) => ['--values', f])];
      const result = await helm(args);
      assert.equal(result.code, 0, `${c.name}: ${result.stdout}${result.stderr}`);
      assert.match(result.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      assert.doesNotMatch(result.stdout, /\[(WARNING|ERROR)\]/, c.name);
    }
  });

  it('every object carries the standard labels', () => {
    for (const [name, objects] of rendered) {
      for (const o of objects) {
        const labels = o.metadata.labels ?? {};
        for (const key of ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'app.kubernetes.io/managed-by', 'helm.sh/chart']) {
          assert.ok(key in labels, `${name}: ${o.kind}/${o.metadata.name} has ${key}`);
        }
      }
    }
  });

  it('the image is pinned to appVersion (never latest), pulled IfNotPresent', () => {
    for (const [name, objects] of rendered) {
      const images = [router(objects).image, ...objects.filter((o) => o.kind === 'Pod').map((p) => ((p['spec'] as PodSpec).containers[0] as Container).image)];
      for (const image of images) {
        assert.equal(image, `ghcr.io/switchyard/switchyard:${APP_VERSION}`, name);
        assert.doesNotMatch(image, /:latest(@|$)/);
      }
      assert.equal(router(objects).imagePullPolicy, 'IfNotPresent');
    }
  });

  it('a digest pins the image by digest; image.tag latest is refused', async () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const objects = await template({ setJson: [`image.digest="${digest}"`] });
    assert.equal(router(objects).image, `ghcr.io/switchyard/switchyard:${APP_VERSION}@${digest}`);
    const latest = await helm(['template', 'sy', CHART, '--set', 'image.tag=latest']);
    assert.notEqual(latest.code, 0);
    assert.match(latest.stderr, /\/image\/tag/);
  });

  it('a scheduling profile names registered plugins with parameters their schemas accept, as the router checks at load', async () => {
    const profile = (p: unknown) => helm(['template', 'sy', CHART, '--set-json', `config.routing.profiles={"chat":${JSON.stringify(p)}}`]);
    const good = await profile({ affinity: ['session', { name: 'prefix', parameters: { spread: 3 } }], scorers: [{ name: 'load-score', weight: 1 }, { name: 'kv-usage', weight: 0.2 }] });
    assert.equal(good.code, 0, good.stderr);
    for (const bad of [{ scorers: [{ name: 'latency', weight: 1 }] }, { affinity: [{ name: 'prefix', parameters: { spread: 0.5 } }] }, { affinity: ['sticky'] }, { filters: ['adapter'] }]) {
      const refused = await profile(bad);
      assert.notEqual(refused.code, 0, JSON.stringify(bad));
      assert.match(refused.stderr, /\/config\/routing\/profiles\/chat/, JSON.stringify(bad));
    }
  });

  it('memory: request 512Mi, limit 1Gi above it, Node heap well under the limit', () => {
    for (const [name, objects] of rendered) {
      const { resources, command } = router(objects);
      const request = bytes(resources.requests?.['memory'] ?? '0');
      const limit = bytes(resources.limits?.['memory'] ?? '0');
      assert.ok(limit > request, `${name}: memory limit ${limit} > request ${request}`);
      assert.ok(resources.requests?.['cpu'], `${name}: a CPU request (the HPA scales on it)`);
      const heap = /^--max-old-space-size=(\d+)$/.exec(command.find((a) => a.startsWith('--max-old-space-size=')) ?? '');
      assert.ok(heap, `${name}: the heap is capped`);
      assert.ok(Number(heap[1]) * 2 ** 20 <= limit / 2, `${name}: heap ${heap[1]} MiB at most half the limit`);
    }
    const defaults = router(rendered.get('defaults') as K8sObject[]).resources;
    assert.deepEqual([defaults.requests?.['memory'], defaults.limits?.['memory']], ['512Mi', '1Gi']);
  });

  it('probes: startup and liveness on /livez, readiness on /readyz, all on the named admin port; no exec hook', () => {
    for (const [name, objects] of rendered) {
      const c = router(objects);
      assert.deepEqual(c.ports?.map((p) => p.name), ['http', 'admin'], name);
      assert.deepEqual(c.startupProbe?.httpGet, { path: '/livez', port: 'admin' }, name);
      assert.deepEqual(c.livenessProbe?.httpGet, { path: '/livez', port: 'admin' }, name);
      assert.deepEqual(c.readinessProbe?.httpGet, { path: '/readyz', port: 'admin' }, name);
      assert.ok((c.livenessProbe?.timeoutSeconds ?? 1) >= 5, `${name}: generous liveness timeout (the 1 s default killed a peer router under load)`);
      assert.ok((c.startupProbe?.failureThreshold ?? 0) * 2 >= 60, `${name}: startup allows a minute`);
      assert.equal(c.lifecycle, undefined, `${name}: no lifecycle hook (the image has no shell)`);
    }
  });

  it('the ConfigMap is a config the router accepts, listening on the container ports, with no inline secret', () => {
    for (const [name, objects] of rendered) {
      const text = renderedConfig(objects);
      assert.doesNotMatch(text, /apiKey:/, `${name}: no inline key`);
      const file = join(scratch, `${name}.yaml`);
      writeFileSync(file, text);
      const loaded = loadConfig(['--config', file], {});
      assert.equal(loaded.kind, 'config', name);
      if (loaded.kind !== 'config') continue;
      const ports = Object.fromEntries((router(objects).ports ?? []).map((p) => [p.name, p.containerPort]));
      assert.equal(loaded.config.listen, `0.0.0.0:${ports['http']}`, name);
      assert.equal(loaded.config.adminListen, `0.0.0.0:${ports['admin']}`, name);
      const args = router(objects).args;
      assert.deepEqual(args.slice(0, 3), ['serve', '--config', '/etc/switchyard/config.yaml'], name);
      const mount = router(objects).volumeMounts?.find((m) => m.name === 'config');
      assert.deepEqual([mount?.mountPath, mount?.readOnly], ['/etc/switchyard', true], name);
    }
  });

  it('keys and the admin token come from Secrets mounted read-only, and the config names those files', () => {
    const staticObjects = rendered.get('static-values.yaml') as K8sObject[];
    const staticConfig = parse(renderedConfig(staticObjects)) as { upstream: { apiKeyFile: string } };
    assert.equal(staticConfig.upstream.apiKeyFile, '/var/run/secrets/switchyard/upstream/api-key');
    const volume = podSpec(staticObjects).volumes?.find((v) => v.secret?.secretName === 'vllm-api-key');
    assert.deepEqual(volume?.secret?.items, [{ key: 'api-key', path: 'api-key' }]);
    const mount = router(staticObjects).volumeMounts?.find((m) => m.name === volume?.name);
    assert.deepEqual([mount?.mountPath, mount?.readOnly], ['/var/run/secrets/switchyard/upstream', true]);

    const multi = parse(renderedConfig(rendered.get('multi-namespace-values.yaml') as K8sObject[])) as { discovery: { sources: Record<string, { apiKeyFile?: string }> } };
    assert.equal(multi.discovery.sources['team-b']?.apiKeyFile, '/var/run/secrets/switchyard/sources/team-b/api-key');
    assert.equal(multi.discovery.sources['shared']?.apiKeyFile, '/var/run/secrets/switchyard/sources/shared/api-key');
    assert.equal(multi.discovery.sources['team-b-slices']?.apiKeyFile, undefined);

    const pods = rendered.get('pods-values.yaml') as K8sObject[];
    const podsConfig = parse(renderedConfig(pods)) as { adminTokenFile: string; tracing: { headersFile: string; enabled: boolean } };
    assert.equal(podsConfig.adminTokenFile, '/var/run/secrets/switchyard/admin/token');
    assert.deepEqual([podsConfig.tracing.enabled, podsConfig.tracing.headersFile], [true, '/var/run/secrets/switchyard/tracing/headers']);
    const headers = podSpec(pods).volumes?.find((v) => v.secret?.secretName === 'otel-collector-auth');
    assert.deepEqual(headers?.secret?.items, [{ key: 'headers', path: 'headers' }]);
    assert.deepEqual(router(pods).volumeMounts?.find((m) => m.name === headers?.name)?.mountPath, '/var/run/secrets/switchyard/tracing');
  });

  it('Redis and API keys: the config names files mounted from the Secrets, read-only, whole directories; nothing secret in the ConfigMap', () => {
    const objects = rendered.get('redis-values.yaml') as K8sObject[];
    const config = parse(renderedConfig(objects)) as { redis: Record<string, unknown>; auth: { apiKeysFile: string }; sessions: { ttlMs: number } };
    assert.deepEqual(config.redis, {
      url: 'rediss://redis-master.redis.svc:6380/0',
      username: 'switchyard-prod',
      keyPrefix: 'switchyard-prod:',
      passwordFile: '/var/run/secrets/switchyard/redis/password',
      tls: {
        enabled: true,
        caFile: '/var/run/secrets/switchyard/redis-tls/ca.crt',
        certFile: '/var/run/secrets/switchyard/redis-tls/tls.crt',
        keyFile: '/var/run/secrets/switchyard/redis-tls/tls.key',
      },
    });
    assert.equal(config.auth.apiKeysFile, '/var/run/secrets/switchyard/api-keys/api-keys.yaml');
    assert.equal(config.sessions.ttlMs, 1_800_000);
    const volumes = podSpec(objects).volumes ?? [];
    const mounts = router(objects).volumeMounts ?? [];
    const expected: [string, string, { key: string; path: string }[]][] = [
      ['switchyard-redis', '/var/run/secrets/switchyard/redis', [{ key: 'password', path: 'password' }]],
      [
        'switchyard-redis-tls',
        '/var/run/secrets/switchyard/redis-tls',
        [
          { key: 'ca.crt', path: 'ca.crt' },
          { key: 'tls.crt', path: 'tls.crt' },
          { key: 'tls.key', path: 'tls.key' },
        ],
      ],
      ['switchyard-api-keys', '/var/run/secrets/switchyard/api-keys', [{ key: 'keys.yaml', path: 'api-keys.yaml' }]],
    ];
    for (const [secret, dir, items] of expected) {
      const volume = volumes.find((v) => v.secret?.secretName === secret);
      assert.deepEqual(volume?.secret?.items, items, secret);
      const mount = mounts.find((m) => m.name === volume?.name);
      assert.deepEqual([mount?.mountPath, mount?.readOnly], [dir, true], secret);
    }
    // The router's config accepts what the chart wrote (loaded in the ConfigMap test above); no value of a Secret is in it.
    assert.doesNotMatch(renderedConfig(objects), /password:|BEGIN/);
  });

  it('with Redis, the session names\' secret is a Secret of its own, created once with a random value, mounted and named by sessions.keySecretFile', async () => {
    const secretOf = (objects: K8sObject[], name: string) => objects.find((o) => o.kind === 'Secret' && o.metadata.name === name);
    const keyFile = (objects: K8sObject[]) => (parse(renderedConfig(objects)) as { sessions?: { keySecretFile?: string } }).sessions?.keySecretFile;
    const objects = rendered.get('redis-values.yaml') as K8sObject[];
    const secret = secretOf(objects, 'sy-switchyard-session-key');
    const value = Buffer.from(((secret?.['data'] ?? {}) as Record<string, string>)['session-key'] ?? '', 'base64').toString('utf8');
    assert.match(value, /^[A-Za-z0-9]{48}$/, 'a random 48-character secret (about 285 bits)');
    assert.equal(keyFile(objects), '/var/run/secrets/switchyard/session-key/session-key');
    const volume = podSpec(objects).volumes?.find((v) => v.secret?.secretName === 'sy-switchyard-session-key');
    assert.deepEqual(volume?.secret?.items, [{ key: 'session-key', path: 'session-key' }]);
    const mount = router(objects).volumeMounts?.find((m) => m.name === volume?.name);
    assert.deepEqual([mount?.mountPath, mount?.readOnly], ['/var/run/secrets/switchyard/session-key', true]);
    assert.doesNotMatch(renderedConfig(objects), new RegExp(value), 'the value is in the Secret only');

    // Without Redis nothing is stored: no Secret, no file (the router's derived secret keeps placement alike).
    const defaults = rendered.get('defaults') as K8sObject[];
    assert.equal(defaults.filter((o) => o.kind === 'Secret').length, 0);
    assert.equal(keyFile(defaults), undefined);

    // GitOps and helm template: a Secret of one's own, and none rendered.
    const own = await template({ setJson: ['config.redis={"url":"redis://r.redis.svc:6379"}', 'secrets.sessionKey={"existingSecret":"my-session-key","key":"k"}'] });
    assert.equal(own.filter((o) => o.kind === 'Secret').length, 0);
    assert.deepEqual(podSpec(own).volumes?.find((v) => v.secret?.secretName === 'my-session-key')?.secret?.items, [{ key: 'k', path: 'session-key' }]);
    assert.equal(keyFile(own), '/var/run/secrets/switchyard/session-key/session-key');
    const off = await template({ setJson: ['config.redis={"url":"redis://r.redis.svc:6379"}', 'secrets.sessionKey.create=false'] });
    assert.equal(off.filter((o) => o.kind === 'Secret').length, 0);
    assert.equal(keyFile(off), undefined);
  });

  it('the admin token can be generated into <fullname>-admin-token (off by default), and the monitors authenticate with it', async () => {
    assert.equal((rendered.get('monitoring-values.yaml') as K8sObject[]).filter((o) => o.kind === 'Secret').length, 0, 'an existing Secret is used as it is');
    const objects = await template({ setJson: ['secrets.adminToken.create=true', 'metrics.serviceMonitor.enabled=true', 'metrics.podMonitor.enabled=true'] });
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'sy-switchyard-admin-token');
    assert.match(Buffer.from(((secret?.['data'] ?? {}) as Record<string, string>)['token'] ?? '', 'base64').toString('utf8'), /^[A-Za-z0-9]{48}$/);
    assert.equal((parse(renderedConfig(objects)) as { adminTokenFile?: string }).adminTokenFile, '/var/run/secrets/switchyard/admin/token');
    for (const kind of ['ServiceMonitor', 'PodMonitor']) {
      const endpoints = ((only(objects, kind)['spec'] as Record<string, unknown>)[kind === 'ServiceMonitor' ? 'endpoints' : 'podMetricsEndpoints'] as { authorization?: unknown }[]);
      assert.deepEqual(endpoints[0]?.authorization, { type: 'Bearer', credentials: { name: 'sy-switchyard-admin-token', key: 'token' } }, kind);
    }
  });

  it('no Secret is mounted with subPath, so the kubelet updates mounted files in place (the API keys reload without a restart)', () => {
    for (const [name, objects] of rendered) {
      const pods = [podSpec(objects), ...objects.filter((o) => o.kind === 'Pod').map((p) => p['spec'] as PodSpec)];
      for (const c of pods.flatMap((p) => p.containers)) {
        for (const mount of c.volumeMounts ?? []) assert.equal((mount as { subPath?: string }).subPath, undefined, `${name}: ${c.name} mounts ${mount.name} with subPath`);
      }
    }
  });

  it('Redis: a mutual-TLS Secret needs both halves, a Redis Secret needs a Redis, API keys refuse forwarding the client header, credentials never go in the url', async () => {
    const refused: [string[], RegExp][] = [
      [['secrets.redisPassword={"existingSecret":"r","key":"password"}'], /secrets.redisPassword is set but config.redis names no Redis/],
      [['config.redis={"url":"redis://r:6379"}', 'secrets.redisTls={"existingSecret":"t","caKey":"","certKey":"tls.crt","keyKey":""}'], /certKey and keyKey go together/],
      [['config.redis={"url":"redis://r:6379"}', 'secrets.redisTls={"existingSecret":"t","caKey":"","certKey":"","keyKey":""}'], /name caKey, or certKey and keyKey/],
      [['secrets.apiKeys={"existingSecret":"k","key":"keys"}', 'config.upstream={"forwardClientAuthorization":true}'], /cannot also be forwarded/],
      [['config.redis={"url":"redis://user:secret@r:6379"}'], /\/config\/redis\/url/],
      [['config.redis={"url":"redis://r:6379","password":"secret"}'], /additional properties 'password'/],
    ];
    for (const [pairs, message] of refused) {
      const result = await helm(['template', 'sy', CHART, ...pairs.flatMap((p) => ['--set-json', p])]);
      assert.notEqual(result.code, 0, `${pairs.join(' ')} refused`);
      assert.match(result.stderr, message, pairs.join(' '));
    }
    // A CA alone (server-verified TLS), in sentinel mode with the Sentinels' own password.
    const sentinel = await template({
      setJson: [
        'config.redis={"mode":"sentinel","nodes":["sentinel-0.sentinel:26379","sentinel-1.sentinel:26379"],"sentinelMasterName":"switchyard"}',
        'secrets.redisSentinelPassword={"existingSecret":"sentinel","key":"password"}',
        'secrets.redisTls={"existingSecret":"redis-ca","caKey":"ca.crt","certKey":"","keyKey":""}',
      ],
    });
    const redis = (parse(renderedConfig(sentinel)) as { redis: Record<string, unknown> }).redis;
    assert.equal(redis['sentinelPasswordFile'], '/var/run/secrets/switchyard/redis-sentinel/password');
    assert.deepEqual(redis['tls'], { enabled: true, caFile: '/var/run/secrets/switchyard/redis-tls/ca.crt' });
  });

  it('NetworkPolicy: egress to Redis on its configured ports (Sentinels and their master too), to the peers derived or given, or the rules given', async () => {
    const inRedisNamespace = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'redis' } } };
    const redisRule = (objects: K8sObject[]) => egressOf(objects).at(-1);
    assert.deepEqual(redisRule(rendered.get('redis-values.yaml') as K8sObject[]), { to: [inRedisNamespace], ports: [{ port: 6380, protocol: 'TCP' }] }, 'the namespace and port of config.redis.url');
    assert.ok(!JSON.stringify(egressOf(rendered.get('networkpolicy-values.yaml') as K8sObject[])).includes('"port":63'), 'no Redis rule without Redis');
    const sentinel = await template({ setJson: ['networkPolicy.enabled=true', NO_REPLICA_COUNT, 'config.redis={"mode":"sentinel","nodes":["s-0.sentinel.redis.svc:26379","s-1.sentinel.redis.svc.cluster.local:26379"]}'] });
    assert.deepEqual(redisRule(sentinel), { to: [inRedisNamespace], ports: [{ port: 26379, protocol: 'TCP' }, { port: 6379, protocol: 'TCP' }] });
    const byAddress = await template({ setJson: ['networkPolicy.enabled=true', NO_REPLICA_COUNT, 'config.redis={"url":"redis://10.1.2.3:6379"}'] });
    assert.deepEqual(redisRule(byAddress)?.to, [{ ipBlock: { cidr: '10.1.2.3/32' } }]);
    const peers = [{ podSelector: { matchLabels: { app: 'redis' } } }];
    const named = await template({ setJson: ['networkPolicy.enabled=true', NO_REPLICA_COUNT, 'config.redis={"url":"redis://redis.example.com:6379"}', `networkPolicy.redisTo=${JSON.stringify(peers)}`] });
    assert.deepEqual(redisRule(named), { to: peers, ports: [{ port: 6379, protocol: 'TCP' }] });
    const given = [{ to: [inRedisNamespace], ports: [{ port: 6379, protocol: 'TCP' }] }];
    const custom = await template({ setJson: ['networkPolicy.enabled=true', NO_REPLICA_COUNT, 'config.redis={"url":"redis://r.redis.svc:6379"}', `networkPolicy.redis=${JSON.stringify(given)}`] });
    assert.deepEqual(redisRule(custom), given[0]);
  });

  it('regression: with NetworkPolicy on, Redis egress was open to any address on its ports', async () => {
    for (const [name, objects] of rendered) {
      if (!objects.some((o) => o.kind === 'NetworkPolicy')) continue;
      for (const rule of egressOf(objects)) assert.ok((rule.to ?? []).length > 0, `${name}: an egress rule without peers allows any address: ${JSON.stringify(rule)}`);
    }
    const refused: [string[], RegExp][] = [
      [['config.redis={"url":"redis://redis.example.com:6379"}'], /Redis host redis\.example\.com .* set networkPolicy\.redisTo/],
      [['config.redis={"mode":"sentinel","nodes":["s-0.s:26379"]}'], /Redis host s-0\.s /],
      [['config.redis={"url":"redis://r.redis.svc:6379"}', 'networkPolicy.redis=[{"ports":[{"port":6379}]}]'], /every rule needs `to`/],
    ];
    for (const [pairs, message] of refused) {
      const result = await helm(['template', 'sy', CHART, '--set-json', 'networkPolicy.enabled=true', '--set-json', NO_REPLICA_COUNT, ...pairs.flatMap((p) => ['--set-json', p])]);
      assert.notEqual(result.code, 0, `${pairs.join(' ')} refused`);
      assert.match(result.stderr, message, pairs.join(' '));
    }
  });

  it('regression: with NetworkPolicy on and apiServer.cidrs empty, egress was open to any address on 443/6443', async () => {
    const result = await helm(['template', 'sy', CHART, '--set-json', 'networkPolicy.enabled=true', '--set-json', 'config.discovery={"mode":"endpointslices","service":"vllm"}']);
    assert.notEqual(result.code, 0, 'refused');
    assert.match(result.stderr, /networkPolicy\.apiServer\.cidrs is empty, but the router reads the Kubernetes API/);
    assert.match(result.stderr, /kubectl get endpointslices -n default kubernetes/);
    // Static discovery still reads the API for the replica count (on by default): refused the same way.
    const staticCounted = await helm(['template', 'sy', CHART, '--set-json', 'networkPolicy.enabled=true', '--set-json', 'config.backends=["http://10.20.0.5:8000"]']);
    assert.notEqual(staticCounted.code, 0, 'static discovery with the replica count: refused');
    assert.match(staticCounted.stderr, /replicaCountFromService[\s\S]*set it to false/);
    // Without API reads there is no API rule to open: static backends render with no CIDRs.
    const staticOnly = await template({ setJson: ['networkPolicy.enabled=true', NO_REPLICA_COUNT, 'config.backends=["http://10.20.0.5:8000"]'] });
    assert.ok(!JSON.stringify(egressOf(staticOnly)).includes('"port":6443'));
    // The notes say how to compare the CIDRs with the API server's endpoints.
    const notes = await helm(['install', 'np', CHART, '--dry-run=client', '--values', `${CHART}/ci/networkpolicy-values.yaml`]);
    assert.equal(notes.code, 0, notes.stderr);
    assert.match(notes.stdout, /Egress to the Kubernetes API only at 10\.0\.0\.1\/32[\s\S]*kubectl get endpointslices -n default kubernetes/);
  });

  it('regression: networkPolicy.adminFrom [] admitted every peer to the admin port instead of none', async () => {
    const objects = await template({ setJson: ['networkPolicy.enabled=true', NO_REPLICA_COUNT, 'networkPolicy.trafficFrom=[]', 'networkPolicy.adminFrom=[]'] });
    const ingress = (only(objects, 'NetworkPolicy')['spec'] as { ingress: { ports: { port: string }[]; from?: unknown[] }[] }).ingress;
    assert.deepEqual(ingress.map((r) => r.ports.map((p) => p.port)), [['http']], 'no ingress rule for the admin port');
    // helm test then reads /readyz on the traffic port, which the policy lets it reach.
    const args = ((only(objects, 'Pod')['spec'] as PodSpec).containers[0] as Container).args;
    assert.deepEqual(args.filter((a) => a.startsWith('http')), ['http://sy-switchyard.switchyard.svc:8080/readyz', 'http://sy-switchyard.switchyard.svc:8080/v1/models']);
  });

  it('helm test with API keys on checks /readyz only (the test Pod holds no client key, and /v1/models would answer 401)', () => {
    const pod = only(rendered.get('redis-values.yaml') as K8sObject[], 'Pod');
    const args = ((pod['spec'] as PodSpec).containers[0] as Container).args;
    assert.deepEqual(args.filter((a) => a.startsWith('http')), ['http://sy-switchyard-admin.switchyard.svc:9090/readyz']);
  });

  it('the values schema refuses inline secrets, chart-owned keys, typos and incomplete sources', async () => {
    const refused: [string, RegExp][] = [
      ['config.upstream.apiKey="sk-1"', /\/config\/upstream\/apiKey/],
      ['config.discovery.static={"apiKey":"sk-1"}', /\/config\/discovery\/static\/apiKey/],
      ['config.discovery={"mode":"pods","labelSelector":"a=b","apiKey":"sk-1"}', /\/config\/discovery\/apiKey/],
      ['config.discovery.sources={"b":{"kind":"pods","namespace":"b","labelSelector":"a=b","apiKey":"sk-1"}}', /\/config\/discovery\/sources\/b\/apiKey/],
      ['config.adminToken="t"', /additional properties 'adminToken'/],
      ['config.listen="0.0.0.0:1"', /additional properties 'listen'/],
      ['config.timeouts={"conectMs":1}', /additional properties 'conectMs'/],
      ['config.discovery={"mode":"pods"}', /missing property 'labelSelector'/],
      ['config.discovery.sources={"b":{"kind":"endpointslices"}}', /missing property 'service'/],
      ['config.discovery.sources={"b":{"kind":"inferencepool"}}', /missing property 'pool'/],
    ];
    for (const [pair, message] of refused) {
      const result = await helm(['template', 'sy', CHART, '--set-json', pair]);
      assert.notEqual(result.code, 0, `${pair} refused`);
      assert.match(result.stderr, message, pair);
    }
    const unknownSource = await helm(['template', 'sy', CHART, '--set-json', 'secrets.sourceApiKeys={"nope":{"existingSecret":"s","key":"k"}}']);
    assert.match(unknownSource.stderr, /there is no config.discovery.sources.nope/);
  });

  it('terminationGracePeriodSeconds = preStopDelayMs + drainTimeoutMs (rounded up) + margin', async () => {
    for (const [name, objects] of rendered) assert.equal(podSpec(objects).terminationGracePeriodSeconds, 10 + 15 + 5, name);
    const custom = await template({ setJson: ['config.lifecycle={"preStopDelayMs":0,"drainTimeoutMs":60001}', 'terminationGraceMarginSeconds=2'] });
    assert.equal(podSpec(custom).terminationGracePeriodSeconds, 0 + 61 + 2);
    // Unset values fall back to the router's own defaults.
    const unset = await template({ setJson: ['config.lifecycle=null'] });
    assert.equal(podSpec(unset).terminationGracePeriodSeconds, Math.ceil((LIFECYCLE_DEFAULTS.preStopDelayMs + LIFECYCLE_DEFAULTS.drainTimeoutMs) / 1000) + 5);
  });

  it('a config change changes the checksum/config annotation (pods roll); other changes do not', async () => {
    const checksum = (objects: K8sObject[]) => ((only(objects, 'Deployment')['spec'] as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata.annotations['checksum/config']);
    const base = checksum(rendered.get('defaults') as K8sObject[]);
    assert.match(base ?? '', /^[0-9a-f]{64}$/);
    assert.notEqual(checksum(await template({ setJson: ['config.routing={"policy":"round-robin"}'] })), base);
    assert.equal(checksum(await template({ setJson: ['replicaCount=5'] })), base);
  });

  it('hardened securityContext: non-root, read-only root, no capabilities, RuntimeDefault seccomp, no escalation', () => {
    for (const [name, objects] of rendered) {
      const pods = [podSpec(objects), ...objects.filter((o) => o.kind === 'Pod').map((p) => p['spec'] as PodSpec)];
      for (const spec of pods) {
        assert.equal(spec.securityContext['runAsNonRoot'], true, name);
        assert.deepEqual(spec.securityContext['seccompProfile'], { type: 'RuntimeDefault' }, name);
        for (const c of spec.containers) {
          assert.equal(c.securityContext['allowPrivilegeEscalation'], false, name);
          assert.equal(c.securityContext['readOnlyRootFilesystem'], true, name);
          assert.deepEqual(c.securityContext.capabilities?.drop, ['ALL'], name);
          assert.equal(c.securityContext['runAsNonRoot'], true, name);
        }
      }
    }
  });

  it('Ingress and HTTPRoute: off by default; when on, they route to the traffic port of the traffic Service only, never the admin port', async () => {
    for (const kind of ['Ingress', 'HTTPRoute']) assert.ok(!(rendered.get('defaults') as K8sObject[]).some((o) => o.kind === kind), `no ${kind} by default`);
    const objects = rendered.get('ingress-values.yaml') as K8sObject[];
    type Backend = { service: { name: string; port: { name: string } } };
    const ingress = only(objects, 'Ingress')['spec'] as { ingressClassName: string; tls: unknown[]; rules: { host?: string; http: { paths: { path: string; pathType: string; backend: Backend }[] } }[] };
    assert.equal(ingress.ingressClassName, 'nginx');
    assert.deepEqual(
      ingress.rules.map((r) => [r.host, r.http.paths.map((p) => `${p.pathType} ${p.path} -> ${p.backend.service.name}:${p.backend.service.port.name}`)]),
      [
        ['llm.example.com', ['Prefix /v1 -> sy-switchyard:http']],
        ['llm-internal.example.com', ['Prefix / -> sy-switchyard:http']],
      ],
    );
    assert.deepEqual(ingress.tls, [{ hosts: ['llm.example.com'], secretName: 'llm-tls' }]);
    const route = only(objects, 'HTTPRoute');
    assert.equal(route.apiVersion, 'gateway.networking.k8s.io/v1');
    const spec = route['spec'] as { parentRefs: unknown[]; hostnames: string[]; rules: { matches: unknown[]; timeouts: unknown; backendRefs: { name: string; port: number }[] }[] };
    assert.deepEqual(spec.parentRefs, [{ name: 'inference-gateway', namespace: 'gateways' }]);
    assert.deepEqual(spec.rules, [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], timeouts: { request: '3600s' }, backendRefs: [{ name: 'sy-switchyard', port: 8080 }] }]);
    const trafficService = only(objects, 'Service', 'sy-switchyard')['spec'] as { ports: { name: string; port: number }[] };
    assert.deepEqual(trafficService.ports.map((p) => p.name), ['http'], 'the routed Service carries no admin port');
    // Every host on / by default; an HTTPRoute needs the Gateway to attach to.
    const bare = only(await template({ setJson: ['config.backends=["http://e:8000"]', 'ingress.enabled=true'] }), 'Ingress')['spec'] as typeof ingress;
    assert.deepEqual(bare.rules.map((r) => [r.host, r.http.paths.map((p) => p.path)]), [[undefined, ['/']]]);
    const orphan = await helm(templateArgs({ setJson: ['config.backends=["http://e:8000"]', 'httpRoute.enabled=true'] }));
    assert.notEqual(orphan.code, 0);
    assert.match(orphan.stderr, /httpRoute\.enabled needs httpRoute\.parentRefs/);
    const typo = await helm(templateArgs({ setJson: ['config.backends=["http://e:8000"]', 'ingress.enabled=true', 'ingress.hosts=[{"host":"a","path":"/"}]'] }));
    assert.notEqual(typo.code, 0, 'the schema refuses a host entry with an unknown key');
  });

  it('RBAC: a Role per watched namespace, get/list/watch only on what its sources read (and its own Service\'s slices in its namespace), bound to the router; nothing cluster-wide', () => {
    // Resources as kubectl names them (resource.group); the old group's InferencePools are only
    // listed (to report a pool that exists only at the unsupported v1alpha2), never read or watched.
    const SLICES = 'endpointslices.discovery.k8s.io';
    const OLD_POOLS = 'inferencepools.inference.networking.x-k8s.io';
    const POOL = ['inferencemodelrewrites.inference.networking.x-k8s.io', 'inferenceobjectives.inference.networking.x-k8s.io', 'inferencepools.inference.networking.k8s.io', OLD_POOLS, 'pods'];
    const expected: Record<string, Record<string, string[]>> = {
      defaults: { switchyard: [SLICES] },
      'static-values.yaml': { switchyard: [SLICES] },
      'hpa-values.yaml': { switchyard: [SLICES] },
      'pods-values.yaml': { switchyard: [SLICES, 'pods'] },
      'monitoring-values.yaml': { switchyard: [SLICES, 'pods'] },
      'networkpolicy-values.yaml': { switchyard: [SLICES, 'pods'] },
      'endpointslices-values.yaml': { inference: [SLICES], switchyard: [SLICES] },
      'inferencepool-values.yaml': { inference: POOL, switchyard: [SLICES, ...POOL] },
      'multi-namespace-values.yaml': { switchyard: [SLICES, 'pods'], 'team-b': [SLICES, 'pods'], 'shared-models': [SLICES] },
      'redis-values.yaml': { switchyard: [SLICES, 'pods'] },
      'ingress-values.yaml': { switchyard: [SLICES] },
    };
    for (const [name, objects] of rendered) {
      assert.ok(!objects.some((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding'), `${name}: nothing cluster-wide`);
      const roles = objects.filter((o) => o.kind === 'Role');
      const byNamespace: Record<string, string[]> = {};
      for (const role of roles) {
        const granted = (role['rules'] as Rule[]).flatMap((rule) => {
          assert.equal(rule.apiGroups.length, 1, `${name}: one API group per rule`);
          const resources = rule.resources.map((r) => (rule.apiGroups[0] === '' ? r : `${r}.${rule.apiGroups[0] as string}`));
          for (const resource of resources) assert.deepEqual(rule.verbs, resource === OLD_POOLS ? ['list'] : ['get', 'list', 'watch'], `${name}: ${resource} read-only`);
          return resources;
        });
        // Sorted, duplicates kept: a namespace with pods and inferencepool sources names pods once.
        byNamespace[role.metadata.namespace as string] = granted.sort();
      }
      assert.deepEqual(byNamespace, expected[name], name);
      for (const binding of objects.filter((o) => o.kind === 'RoleBinding')) {
        assert.deepEqual(binding['subjects'], [{ kind: 'ServiceAccount', name: 'sy-switchyard', namespace: 'switchyard' }], name);
      }
      const needsToken = Object.keys(expected[name] ?? {}).length > 0;
      assert.equal(podSpec(objects).automountServiceAccountToken, needsToken, `${name}: the token is mounted only when the router reads the API`);
      assert.equal(only(objects, 'ServiceAccount')['automountServiceAccountToken'], false, name);
    }
  });

  it("the replica count: each replica counts the pods of the chart's own Service, unless replicaCountFromService is off", async () => {
    const defaults = rendered.get('defaults') as K8sObject[];
    const load = (objects: K8sObject[]) => (parse(renderedConfig(objects)) as { load?: Record<string, unknown> }).load;
    assert.equal(load(defaults)?.['replicasFromService'], 'sy-switchyard');
    const traffic = defaults.find((o) => o.kind === 'Service' && o.metadata.name === 'sy-switchyard');
    assert.deepEqual((traffic?.['spec'] as { ports: { name: string }[] }).ports.map((p) => p.name), ['http'], 'the traffic Service (the admin one has its own name)');
    // Under an HPA, maxReplicas holds until the first count.
    assert.deepEqual(load(rendered.get('hpa-values.yaml') as K8sObject[]), { replicas: 6, replicasFromService: 'sy-switchyard' });
    const off = await template({ setJson: [NO_REPLICA_COUNT] });
    assert.equal(load(off), undefined, 'nothing in config.load');
    assert.ok(!off.some((o) => o.kind === 'Role'), 'no Role with static discovery');
    assert.equal(podSpec(off).automountServiceAccountToken, false, 'no token');
  });

  it("InferencePool sources: the release's Service is switchyard's name as a pool's endpoint picker; nothing is added without such a source", () => {
    const discovery = (objects: K8sObject[]) => (parse(renderedConfig(objects)) as { discovery?: Record<string, unknown> }).discovery;
    assert.equal(discovery(rendered.get('inferencepool-values.yaml') as K8sObject[])?.['endpointPickerService'], 'sy-switchyard');
    assert.equal(discovery(rendered.get('pods-values.yaml') as K8sObject[])?.['endpointPickerService'], undefined);
  });

  it('replicas: 3 by default, RollingUpdate maxUnavailable 0, PDB maxUnavailable 1 whenever more than one can run, soft spread', async () => {
    const defaults = rendered.get('defaults') as K8sObject[];
    const spec = only(defaults, 'Deployment')['spec'] as { replicas: number; strategy: { type: string; rollingUpdate: { maxUnavailable: number } } };
    assert.equal(spec.replicas, 3);
    assert.deepEqual([spec.strategy.type, spec.strategy.rollingUpdate.maxUnavailable], ['RollingUpdate', 0]);
    assert.equal((only(defaults, 'PodDisruptionBudget')['spec'] as { maxUnavailable: number }).maxUnavailable, 1);
    assert.deepEqual(
      podSpec(defaults).topologySpreadConstraints?.map((t) => [t.topologyKey, t.whenUnsatisfiable]),
      [['topology.kubernetes.io/zone', 'ScheduleAnyway'], ['kubernetes.io/hostname', 'ScheduleAnyway']],
    );
    const single = await template({ setJson: ['replicaCount=1'] });
    assert.ok(!single.some((o) => o.kind === 'PodDisruptionBudget'), 'one replica: a PDB would block every drain');
  });

  it('HPA (autoscaling/v2) targets the Deployment by the same kind and name, and the Deployment leaves replicas to it', () => {
    const objects = rendered.get('hpa-values.yaml') as K8sObject[];
    const hpa = only(objects, 'HorizontalPodAutoscaler');
    const deployment = only(objects, 'Deployment');
    assert.equal(hpa.apiVersion, 'autoscaling/v2');
    assert.deepEqual((hpa['spec'] as { scaleTargetRef: unknown }).scaleTargetRef, { apiVersion: deployment.apiVersion, kind: deployment.kind, name: deployment.metadata.name });
    assert.equal((deployment['spec'] as { replicas?: number }).replicas, undefined);
    assert.ok(objects.some((o) => o.kind === 'PodDisruptionBudget'));
  });

  it("the router's replica count (load.replicas) is the HPA's maxReplicas (a ceiling: a share admits less, never more), unless config sets it; a fixed replicaCount is not copied in", async () => {
    const replicasIn = (objects: K8sObject[]) => (parse(renderedConfig(objects)) as { load?: { replicas?: number } }).load?.replicas;
    const hpaValues = ['autoscaling.enabled=true', 'autoscaling.maxReplicas=7'];
    assert.equal(replicasIn(await template({ setJson: hpaValues })), 7);
    assert.equal(replicasIn(await template({ setJson: [...hpaValues, 'config.load={"replicas":12}'] })), 12);
    assert.equal(replicasIn(rendered.get('defaults') as K8sObject[]), undefined);
  });

  it('Services: ClusterIP traffic Service with the traffic port by name, and the admin port on a Service of its own', async () => {
    const service = only(rendered.get('defaults') as K8sObject[], 'Service', 'sy-switchyard')['spec'] as { type: string; ports: { name: string; targetPort: string }[] };
    assert.equal(service.type, 'ClusterIP');
    assert.deepEqual(service.ports.map((p) => [p.name, p.targetPort]), [['http', 'http']]);
    const annotated = await template({ setJson: ['service.annotations={"t":"1"}', 'service.adminAnnotations={"a":"2"}'] });
    assert.deepEqual(only(annotated, 'Service', 'sy-switchyard').metadata.annotations, { t: '1' });
    assert.deepEqual(only(annotated, 'Service', 'sy-switchyard-admin').metadata.annotations, { a: '2' });
  });

  it('regression: the admin port (/metrics, /debug/endpoints) was published on the traffic Service, so exposing traffic exposed it too', async () => {
    type ServiceSpec = { type: string; selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] };
    const objects = await template({ setJson: ['service.type="LoadBalancer"', 'metrics.serviceMonitor.enabled=true'] });
    const traffic = only(objects, 'Service', 'sy-switchyard');
    const admin = only(objects, 'Service', 'sy-switchyard-admin');
    const trafficSpec = traffic['spec'] as ServiceSpec;
    const adminSpec = admin['spec'] as ServiceSpec;
    assert.equal(trafficSpec.type, 'LoadBalancer');
    assert.deepEqual(trafficSpec.ports.map((p) => p.targetPort), ['http'], 'the traffic Service carries no admin port');
    assert.equal(adminSpec.type, 'ClusterIP', 'the admin Service stays inside the cluster whatever service.type says');
    assert.deepEqual(adminSpec.ports.map((p) => [p.name, p.port, p.targetPort]), [['admin', 9090, 'admin']]);
    assert.deepEqual(adminSpec.selector, trafficSpec.selector);
    // The ServiceMonitor selects the admin Service and not the traffic one.
    const selector = ((only(objects, 'ServiceMonitor')['spec'] as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
    const matches = (o: K8sObject) => Object.entries(selector).every(([k, v]) => o.metadata.labels?.[k] === v);
    assert.deepEqual([matches(admin), matches(traffic)], [true, false]);
  });

  it('NetworkPolicy: ingress to the two ports, egress to DNS, the API server and the engines only', () => {
    const policy = only(rendered.get('networkpolicy-values.yaml') as K8sObject[], 'NetworkPolicy')['spec'] as { ingress: { ports: { port: string }[] }[]; egress: { to?: unknown[]; ports?: { port: number }[] }[] };
    assert.deepEqual(policy.ingress.map((r) => r.ports.map((p) => p.port)), [['http'], ['admin']]);
    const egress = JSON.stringify(policy.egress);
    assert.match(egress, /"port":53/);
    assert.match(egress, /"cidr":"10\.0\.0\.1\/32"/);
    assert.match(egress, /"podSelector":\{"matchLabels":\{"app":"vllm"\}\}/);
    assert.match(egress, /"cidr":"10\.20\.0\.5\/32"/);
    assert.equal(policy.egress.length, 4);
    assert.ok(!(rendered.get('defaults') as K8sObject[]).some((o) => o.kind === 'NetworkPolicy'), 'off by default');
  });

  it('monitoring: ServiceMonitor and PodMonitor scrape the admin port with the admin token; rules and dashboards from the chart files', () => {
    const objects = rendered.get('monitoring-values.yaml') as K8sObject[];
    const auth = { type: 'Bearer', credentials: { name: 'switchyard-admin', key: 'token' } };
    const sm = (only(objects, 'ServiceMonitor')['spec'] as { endpoints: { port: string; path: string; authorization: unknown }[] }).endpoints[0];
    assert.deepEqual([sm?.port, sm?.path, sm?.authorization], ['admin', '/metrics', auth]);
    const pm = (only(objects, 'PodMonitor')['spec'] as { podMetricsEndpoints: { port: string; authorization: unknown }[] }).podMetricsEndpoints[0];
    assert.deepEqual([pm?.port, pm?.authorization], ['admin', auth]);
    const rule = only(objects, 'PrometheusRule');
    assert.equal(rule.metadata.labels?.['release'], 'kube-prometheus-stack');
    const ruleFile = parse(readFileSync(`${CHART}/alerts/switchyard-rules.yaml`, 'utf8')) as { groups: unknown };
    assert.deepEqual((rule['spec'] as { groups: unknown }).groups, ruleFile.groups);
    const dashboards = readdirSync(`${CHART}/dashboards`).filter((f) => f.endsWith('.json'));
    const maps = objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.labels?.['grafana_dashboard'] === '1');
    assert.equal(maps.length, dashboards.length);
    for (const map of maps) {
      const [file, json] = Object.entries(map['data'] as Record<string, string>)[0] as [string, string];
      assert.deepEqual(JSON.parse(json), JSON.parse(readFileSync(`${CHART}/dashboards/${file}`, 'utf8')), file);
      assert.equal(map.metadata.annotations?.['grafana_folder'], 'switchyard');
    }
    for (const name of ['defaults', 'pods-values.yaml']) {
      assert.ok(!(rendered.get(name) as K8sObject[]).some((o) => ['ServiceMonitor', 'PodMonitor', 'PrometheusRule'].includes(o.kind)), `${name}: monitoring off by default`);
    }
  });

  it('the helm test hook runs `switchyard check` against /readyz and /v1/models through the admin and traffic Services', () => {
    const pod = only(rendered.get('defaults') as K8sObject[], 'Pod');
    assert.equal(pod.metadata.annotations?.['helm.sh/hook'], 'test');
    const c = (pod['spec'] as PodSpec).containers[0] as Container;
    assert.deepEqual(c.command, ['/nodejs/bin/node', '/app/router/cli/bin.ts']);
    assert.deepEqual(c.args, ['check', '--timeout-ms', '5000', '--require-models', 'http://sy-switchyard-admin.switchyard.svc:9090/readyz', 'http://sy-switchyard.switchyard.svc:8080/v1/models']);
    assert.equal((pod['spec'] as PodSpec).automountServiceAccountToken, false);
  });

  it('no service-link variables in the router or test pods: a Service named switchyard would inject SWITCHYARD_PORT, SWITCHYARD_SERVICE_HOST, ...', () => {
    for (const [name, objects] of rendered) {
      assert.equal(podSpec(objects).enableServiceLinks, false, `${name}: router pod`);
      for (const pod of objects.filter((o) => o.kind === 'Pod')) assert.equal((pod['spec'] as PodSpec).enableServiceLinks, false, `${name}: ${pod.metadata.name}`);
    }
  });

  it('an init container runs `switchyard check-config` on the router\'s own config, flags, environment and key files', async () => {
    for (const [name, objects] of rendered) {
      const spec = podSpec(objects);
      const check = spec.initContainers?.find((c) => c.name === 'check-config');
      assert.ok(check !== undefined, `${name}: a check-config init container`);
      const routerContainer = spec.containers.find((c) => c.name === 'router') as Container;
      assert.deepEqual(check.args, ['check-config', ...routerContainer.args.slice(1)], `${name}: the router's arguments after serve`);
      assert.deepEqual(check.volumeMounts, routerContainer.volumeMounts, `${name}: the router's mounts (config, key files)`);
      assert.equal(check.image, routerContainer.image, name);
      assert.deepEqual((check as Container & { env?: unknown }).env, (routerContainer as Container & { env?: unknown }).env, name);
      assert.deepEqual(check.securityContext, routerContainer.securityContext, name);
    }
    // The rendered init container, run: it passes on the rendered ConfigMap, and it reads the key
    // files the config names at their mount paths (absent here, so a config naming one fails on it).
    const bin = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));
    const outcomes = new Set<number | null>();
    for (const [name, objects] of rendered) {
      const check = podSpec(objects).initContainers?.[0] as Container;
      const file = join(scratch, `init-${name}.yaml`);
      const text = renderedConfig(objects);
      writeFileSync(file, text);
      const args = check.args.map((arg) => (arg === '/etc/switchyard/config.yaml' ? file : arg));
      const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' }, timeout: 30_000 });
      if (/File: /.test(text)) {
        assert.equal(result.status, 2, `${name}: ${result.stderr}`);
        assert.match(result.stderr, /^switchyard check-config: \S+ \/\S+: cannot read it \(ENOENT\)\n$/, name);
      } else {
        assert.equal(result.status, 0, `${name}: ${result.stderr}`);
        assert.match(result.stdout, /^# switchyard configuration is valid/, name);
      }
      outcomes.add(result.status);
    }
    assert.deepEqual([...outcomes].sort(), [0, 2], 'the matrix has configs with and without key files');
    const off = await template({ setJson: ['configCheck.enabled=false'] });
    assert.equal(podSpec(off).initContainers, undefined, 'configCheck.enabled=false: no init container');
  });

  it('NOTES.txt: a port-forward and curl to /v1/models for this release, and helm test', async () => {
    const result = await helm(['install', 'notes', CHART, '--namespace', 'inference', '--dry-run=client']);
    assert.equal(result.code, 0, result.stderr);
    const notes = result.stdout.slice(result.stdout.indexOf('NOTES:'));
    assert.match(notes, /kubectl -n inference port-forward service\/notes-switchyard 8080:8080 &/);
    assert.match(notes, /kubectl -n inference port-forward service\/notes-switchyard-admin 9090:9090 &/);
    assert.match(notes, /curl -s http:\/\/127\.0\.0\.1:8080\/v1\/models/);
    assert.match(notes, /helm test notes -n inference/);
    assert.doesNotMatch(notes, /inline env values/, 'static discovery reads no pod');
    const pods = await helm(['install', 'notes', CHART, '--namespace', 'inference', '--dry-run=client', '--values', `${CHART}/ci/pods-values.yaml`]);
    assert.equal(pods.code, 0, pods.stderr);
    assert.match(pods.stdout, /pods and inferencepool discovery: the router's Role can read every pod spec in inference,\s+including inline env values/);
  });

  it('names stay within 63 characters for the longest release name helm allows (53)', async () => {
    const objects = await template({ release: 'a'.repeat(53), valuesFiles: ciValuesFiles().filter((f) => /(monitoring|multi-namespace)-values/.test(f)) });
    for (const o of objects) assert.ok(o.metadata.name.length <= 63, `${o.kind} ${o.metadata.name}`);
  });
});

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadKubeConnection } from './kube-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-kubeconfig-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
}

const KUBECONFIG_A = `apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: a, user: {token: tok-a}}]
contexts: [{name: a, context: {cluster: a, user: a, namespace: team-a}}]
current-context: a
`;
const KUBECONFIG_B = `apiVersion: v1
kind: Config
clusters: [{name: b, cluster: {server: "https://127.0.0.2:6443"}}]
users: [{name: b, user: {token: tok-b}}]
contexts: [{name: b, context: {cluster: b, user: b}}]
current-context: b
`;

describe('Kubernetes connection', () => {
  it('a kubeconfig path list: the first file wins, its context namespace is the default', () => {
    const a = kubeconfig('a.yaml', KUBECONFIG_A);
    const b = kubeconfig('b.yaml', KUBECONFIG_B);
    const kube = loadKubeConnection({ kubeconfig: `${a}:${b}`, serviceHost: '10.0.0.1', servicePort: '443', serviceAccountDir: dir });
    assert.equal(kube.mode, 'kubeconfig', 'an explicit kubeconfig wins over in-cluster');
    assert.equal(kube.config.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
    assert.equal(kube.defaultNamespace, 'team-a');
    assert.equal(kube.config.getClusters().length, 2, 'merged');
    const onlyB = loadKubeConnection({ kubeconfig: b, serviceHost: undefined, servicePort: undefined, serviceAccountDir: dir });
    assert.equal(onlyB.defaultNamespace, 'default');
  });

  it('in-cluster: API from KUBERNETES_SERVICE_HOST/PORT, token file auth, own namespace from the namespace file', async () => {
    const sa = join(dir, 'sa');
    rmSync(sa, { recursive: true, force: true });
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 'in-cluster-token');
    writeFileSync(join(sa, 'ca.crt'), '');
    writeFileSync(join(sa, 'namespace'), 'inference\n');
    const kube = loadKubeConnection({ kubeconfig: undefined, serviceHost: 'fd00::1', servicePort: '443', serviceAccountDir: sa });
    assert.equal(kube.mode, 'in-cluster');
    assert.equal(kube.defaultNamespace, 'inference');
    assert.equal(kube.config.getCurrentCluster()?.server, 'https://[fd00::1]:443');
    const options: { headers: Record<string, string> } = { headers: {} };
    await kube.config.applyToHTTPSOptions(options);
    assert.equal(options.headers['Authorization'], 'Bearer in-cluster-token');
  });

  it('says what is missing when there is no API configured', () => {
    assert.throws(
      () => loadKubeConnection({ kubeconfig: undefined, serviceHost: undefined, servicePort: undefined, serviceAccountDir: dir }),
      /not in a cluster .* no --kubeconfig \/ KUBECONFIG/,
    );
    assert.throws(() => loadKubeConnection({ kubeconfig: '', serviceHost: '10.0.0.1', servicePort: '443', serviceAccountDir: join(dir, 'none') }), /no service account token/);
  });
});

describe('kubeconfig errors', () => {
  it('name the file and position of a YAML error, never the credentials around it', () => {
    const file = kubeconfig('broken.yaml', 'apiVersion: v1\nusers:\n- name: u\n  user:\n    token: tok-SECRET-value\n   bad: [\n');
    assert.throws(
      () => loadKubeConnection({ kubeconfig: file, serviceHost: undefined, servicePort: undefined, serviceAccountDir: dir }),
      (err: Error) => err.message === `kubeconfig ${file}: not valid YAML at line 6, column 4`,
    );
  });

  it('name a missing file by its error code', () => {
    const file = join(dir, 'absent.yaml');
    assert.throws(() => loadKubeConnection({ kubeconfig: file, serviceHost: undefined, servicePort: undefined, serviceAccountDir: dir }), {
      message: `kubeconfig ${file}: cannot read it (ENOENT)`,
    });
  });
});

/**
 * Regression: a source watching another namespace used to start with only a
 * warning, so a pod there matching its selector received prompts unless the
 * source had `allowedModels`. Watching outside the router's own namespace is
 * now an explicit opt-in (`discovery.crossNamespace`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubernetesDiscovery, type DiscoveryOptions } from './kubernetes-discovery.ts';
import { foreignSources } from './namespace-trust.ts';
import { writeKubeconfig } from '../../tests/kit/kube/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-cross-ns-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// The context's namespace is the router's own when no source names one.
const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig.yaml'), { server: 'https://127.0.0.1:6443', token: 'tok-a', namespace: 'prod' });
const connection = { kubeconfig, serviceHost: undefined, servicePort: undefined, serviceAccountDir: dir };

function options(overrides: Partial<DiscoveryOptions>): DiscoveryOptions {
  return {
    mode: 'pods',
    labelSelector: 'app=vllm',
    portName: 'http',
    sources: {},
    listTimeoutMs: 1_000,
    serviceAccountDir: dir,
    resyncIntervalMs: 300_000,
    watchIdleTimeoutMs: 150_000,
    ...overrides,
  } as DiscoveryOptions;
}

async function create(discovery: DiscoveryOptions): Promise<void> {
  await KubernetesDiscovery.create(discovery, connection)?.stop();
}

describe('cross-namespace discovery', () => {
  it('regression: a source in another namespace started (with a warning) and its pods received prompts', async () => {
    const teamB = { kind: 'pods' as const, namespace: 'team-b', labelSelector: 'app=vllm', portName: 'http' };
    assert.throws(() => KubernetesDiscovery.create(options({ sources: { 'team-b': teamB } }), connection), /discovery source team-b watches namespace team-b, outside the router's own \(prod\).*discovery\.crossNamespace/);
    await create(options({ sources: { 'team-b': teamB }, crossNamespace: true }));
  });

  it('takes the mode source\'s namespace as the router\'s own, and allows more sources there', async () => {
    const sameNs = { kind: 'endpointslices' as const, namespace: 'inference', service: 'vllm', portName: 'http' };
    await create(options({ namespace: 'inference', sources: { slices: sameNs } }));
    assert.throws(() => KubernetesDiscovery.create(options({ namespace: 'inference', sources: { prod: { kind: 'pods', namespace: 'prod', labelSelector: 'a=b', portName: 'http' } } }), connection), /source prod watches namespace prod/);
  });

  it('names each source outside the home namespace; none when the home namespace is unknown', () => {
    const sources = [
      { name: 'default', namespace: 'prod' },
      { name: 'b', namespace: 'team-b' },
      { name: 'c', namespace: 'prod' },
    ];
    assert.deepEqual(foreignSources(sources, 'prod'), [{ name: 'b', namespace: 'team-b' }]);
    assert.deepEqual(foreignSources(sources, undefined), []);
  });
});

/**
 * Shared pieces of the Kubernetes discovery tests: a KubeApi pointed at the
 * fake, pod and slice objects, and waiting helpers.
 */
import { writeFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApi } from '../../../discovery/kubernetes/kube-api.ts';
import type { ListWatchTiming } from '../../../discovery/kubernetes/list-watcher.ts';

/** Collection path of pods in namespace `ns`. */
export const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
/** Collection path of EndpointSlices in namespace `ns`. */
export const slicesPath = (ns: string) => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;

/** Fast timing for tests: no resync or idle restart unless a test asks for one. */
export const FAST: ListWatchTiming = { resyncIntervalMs: 60_000, watchIdleTimeoutMs: 60_000, backoffInitialMs: 20, backoffMaxMs: 80 };

/** A KubeConfig for a plain-HTTP fake (client-node wants skipTLSVerify for http:) with a bearer token. */
export function kubeConfigFor(server: string, token = 'test-token'): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'fake', server, skipTLSVerify: true }],
    users: [{ name: 'fake', token }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'ns' }],
    currentContext: 'fake',
  });
  return config;
}

/** A KubeApi against `server`. */
export function apiFor(server: string): KubeApi {
  return new KubeApi(kubeConfigFor(server), { listTimeoutMs: 2_000 });
}

/** Options of {@link pod}. */
export interface PodOptions {
  readonly namespace?: string;
  readonly ip?: string;
  readonly ready?: boolean;
  readonly phase?: string;
  readonly deleting?: boolean;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly port?: number;
  readonly portName?: string;
  /** The container's declared ports, replacing the one `port`/`portName` gives ([] declares none). */
  readonly ports?: readonly { readonly name?: string; readonly containerPort: number }[];
}

/** A pod object as the API server returns it. */
export function pod(name: string, options: PodOptions = {}) {
  const { ip = '10.1.0.1', ready = true, phase = 'Running', labels = { app: 'engine' }, annotations = {}, port = 8000, portName = 'http' } = options;
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      namespace: options.namespace ?? 'ns',
      labels,
      annotations,
      ...(options.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 } : {}),
    },
    spec: { containers: [{ name: 'engine', ports: options.ports ?? [{ name: portName, containerPort: port, protocol: 'TCP' }] }] },
    status: {
      phase,
      ...(ip === '' ? {} : { podIP: ip, podIPs: [{ ip }] }),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  };
}

/** Polls `condition` every 5 ms until true, failing after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Writes a kubeconfig with one cluster (TLS unchecked), one token user and one context, the current one. */
export function writeKubeconfig(file: string, options: { readonly server: string; readonly token: string; readonly namespace: string }): string {
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${options.server}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: ${options.token}}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ${options.namespace}}}]
current-context: c
`,
  );
  return file;
}

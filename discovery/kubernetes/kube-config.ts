/**
 * Finds the Kubernetes API and its credentials: a kubeconfig file when one is
 * named (`--kubeconfig`, else the `KUBECONFIG` path list), else the pod's
 * in-cluster service account. The caller passes the environment in; nothing
 * here reads `process.env`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * The client library, loaded on first use: it costs ~25 MB of heap and
 * ~0.4 s of start-up, which a router with static backends never needs (and
 * a smaller heap means shorter garbage-collection pauses on the request path).
 */
function kubeConfig(): KubeConfig {
  const load = createRequire(import.meta.url);
  const library = load('@kubernetes/client-node') as { KubeConfig: new () => KubeConfig };
  return new library.KubeConfig();
}

/** Where the API is and how to reach it. */
export interface KubeConnectionOptions {
  /** Kubeconfig path list (`:`-separated, like KUBECONFIG); first file wins on conflicts. */
  readonly kubeconfig: string | undefined;
  /** `KUBERNETES_SERVICE_HOST` / `KUBERNETES_SERVICE_PORT`, set by the kubelet in every pod. */
  readonly serviceHost: string | undefined;
  readonly servicePort: string | undefined;
  /** Directory with the service account's `token`, `ca.crt` and `namespace`. */
  readonly serviceAccountDir: string;
}

/** A loaded KubeConfig and the namespace to watch when a source names none. */
export interface KubeConnection {
  readonly config: KubeConfig;
  readonly mode: 'kubeconfig' | 'in-cluster';
  /** In-cluster: the router's own namespace (undefined without a namespace file); kubeconfig: the context's, else `default`. */
  readonly defaultNamespace: string | undefined;
}

/**
 * Loads one kubeconfig file. A kubeconfig holds tokens and client keys, and
 * the YAML parser's message quotes the lines around a syntax error, so a
 * failure names the file and the position only.
 * @throws Error `kubeconfig FILE: ...` without any of the file's content.
 */
function loadKubeconfigFile(file: string): KubeConfig {
  const config = kubeConfig();
  try {
    config.loadFromFile(file);
  } catch (err) {
    // No `cause`: printed with the error, it would quote the file.
    /* eslint-disable preserve-caught-error */
    const { name, code, mark, message } = err as { name?: string; code?: unknown; mark?: { line: number; column: number }; message?: string };
    if (name === 'YAMLException') throw new Error(`kubeconfig ${file}: not valid YAML${mark === undefined ? '' : ` at line ${mark.line + 1}, column ${mark.column + 1}`}`);
    if (typeof code === 'string') throw new Error(`kubeconfig ${file}: cannot read it (${code})`);
    // The library's own checks name fields ("users[0].name is missing"), not values.
    throw new Error(`kubeconfig ${file}: ${message ?? 'not a usable kubeconfig'}`);
    /* eslint-enable preserve-caught-error */
  }
  return config;
}

/** @throws Error saying what is missing when neither a kubeconfig nor in-cluster config is available. */
export function loadKubeConnection(options: KubeConnectionOptions): KubeConnection {
  const files = (options.kubeconfig ?? '').split(delimiter).filter((file) => file !== '');
  if (files.length > 0) {
    const config = loadKubeconfigFile(files[0] as string);
    // Same merge as KubeConfig.loadFromDefault, which reads process.env itself.
    for (const file of files.slice(1)) config.mergeConfig(loadKubeconfigFile(file), true);
    if (config.getCurrentCluster() === null) throw new Error(`kubeconfig ${files.join(delimiter)}: no current context with a cluster`);
    const namespace = config.getContextObject(config.getCurrentContext())?.namespace;
    return { config, mode: 'kubeconfig', defaultNamespace: namespace !== undefined && namespace !== '' ? namespace : 'default' };
  }
  const { serviceHost: host, servicePort: port, serviceAccountDir: dir } = options;
  if (host === undefined || host === '' || port === undefined || port === '') {
    throw new Error('no Kubernetes API configured: not in a cluster (KUBERNETES_SERVICE_HOST unset) and no --kubeconfig / KUBECONFIG');
  }
  const tokenFile = join(dir, 'token');
  if (!existsSync(tokenFile)) throw new Error(`in-cluster config: no service account token at ${tokenFile} (automountServiceAccountToken off?)`);
  const config = kubeConfig();
  // As KubeConfig.loadFromCluster, which reads process.env and a fixed path:
  // the token is re-read from the file every 60 s, so rotated tokens are used.
  config.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: join(dir, 'ca.crt'), skipTLSVerify: false }],
    users: [{ name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster' }],
    currentContext: 'in-cluster',
  });
  const namespaceFile = join(dir, 'namespace');
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() : '';
  return { config, mode: 'in-cluster', defaultNamespace: namespace === '' ? undefined : namespace };
}

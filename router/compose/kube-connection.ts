/**
 * Where the Kubernetes API is, for discovery and the replica count alike:
 * the configured kubeconfig, else the environment's, else the in-cluster
 * service account.
 */
import type { KubeConnectionOptions } from '../../discovery/kubernetes/kube-config.ts';
import type { Config } from '../config/schema.ts';

/** Environment variables as the process (or a test) gives them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The Kubernetes connection `config` and `env` (KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT) name. */
export function kubeConnection(config: Config, env: Environment): KubeConnectionOptions {
  return {
    kubeconfig: config.kubeconfig ?? env['KUBECONFIG'],
    serviceHost: env['KUBERNETES_SERVICE_HOST'],
    servicePort: env['KUBERNETES_SERVICE_PORT'],
    serviceAccountDir: config.discovery.serviceAccountDir,
  };
}

/**
 * Where the engines are and what they serve: the configured sources (static
 * list, Kubernetes), the model probe that learns each endpoint's models from
 * /v1/models, and the per-source allow-lists applied to both.
 */
import type { Agent } from 'undici';
import type { EndpointSource } from '../../discovery/endpoint.ts';
import { KubernetesDiscovery, MODE_SOURCE_NAME, discoveryLogObserver } from '../../discovery/kubernetes/kubernetes-discovery.ts';
import { namespaceTrustGap } from '../../discovery/kubernetes/namespace-trust.ts';
import { ModelAllowList } from '../../discovery/model-allow-list.ts';
import { ModelProbe, httpModelFetcher } from '../../discovery/model-probe.ts';
import { STATIC_SOURCE_NAME, StaticEndpointSource } from '../../discovery/static-source.ts';
import { UnionEndpointSource } from '../../discovery/union-source.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import type { EngineCredentials } from '../proxy/engine-credentials.ts';
import { kubeConnection, type Environment } from './kube-connection.ts';

/** The endpoint sources; the router starts and stops them through {@link Discovery.allowList}. */
export interface Discovery {
  /** The Kubernetes sources; undefined with static discovery only, or with a source passed in. */
  readonly kubernetes: KubernetesDiscovery | undefined;
  readonly source: EndpointSource;
  /** Each endpoint's models and its probe status, for /debug/endpoints. */
  readonly probe: ModelProbe;
  /** The endpoint sets the view is updated with: the probe's, filtered by each source's allowedModels. */
  readonly allowList: ModelAllowList;
}

/** What {@link buildDiscovery} needs besides the config. */
export interface DiscoveryDeps {
  readonly env: Environment;
  readonly logger: Logger;
  /** Endpoint source instead of the configured ones (tests, embedding). */
  readonly source?: EndpointSource | undefined;
  readonly credentials: EngineCredentials;
  /** The pool model probes share with scrapes. */
  readonly probeAgent: Agent;
}

/** Builds the sources; nothing is started. Warns once when several namespaces are watched and a source there may claim any model. */
export function buildDiscovery(config: Config, deps: DiscoveryDeps): Discovery {
  const { logger, credentials } = deps;
  const kubernetes = deps.source === undefined ? KubernetesDiscovery.create(config.discovery, kubeConnection(config, deps.env), discoveryLogObserver(logger)) : undefined;
  const source = deps.source ?? configuredSource(config, kubernetes, logger);
  const probe = new ModelProbe(
    source,
    httpModelFetcher(deps.probeAgent, config.modelsRefresh.timeoutMs, (name) => credentials.engineAuthorization(name)),
    config.modelsRefresh,
  );
  // After the probe, so models learnt from /v1/models pass the same per-source allow-list as labels.
  const allowList = new ModelAllowList(probe, allowLists(config), (dropped) =>
    logger.warn(
      { backend: dropped.id, source: dropped.source, dropped: dropped.dropped, droppedCount: dropped.droppedCount, kept: dropped.kept },
      "endpoint claims models its source's allowedModels do not allow; ignoring them",
    ),
  );
  if (kubernetes !== undefined) warnOnNamespaceTrustGap(kubernetes, config, logger);
  return { kubernetes, source, probe, allowList };
}

/** Kubernetes sources, plus the static list when it has entries (or is all there is), merged into one. */
function configuredSource(config: Config, kubernetes: KubernetesDiscovery | undefined, logger: Logger): EndpointSource {
  const sources: EndpointSource[] = kubernetes === undefined ? [] : [kubernetes];
  if (config.backends.length > 0 || kubernetes === undefined) sources.push(new StaticEndpointSource(config.backends, config.load.capacity, STATIC_SOURCE_NAME, config.scrape.dialects));
  if (sources.length === 1) return sources[0] as EndpointSource;
  return new UnionEndpointSource(sources, (id) => logger.warn({ backend: id }, 'two discovery sources gave the same endpoint id; keeping the first'));
}

/** Model allow-lists per source name; sources without one are absent. */
function allowLists(config: Config): Map<string, readonly string[]> {
  const { discovery } = config;
  const lists = new Map<string, readonly string[]>();
  if (discovery.static.allowedModels !== undefined) lists.set(STATIC_SOURCE_NAME, discovery.static.allowedModels);
  if (discovery.mode !== 'static' && discovery.allowedModels !== undefined) lists.set(MODE_SOURCE_NAME, discovery.allowedModels);
  for (const [name, source] of Object.entries(discovery.sources)) if (source.allowedModels !== undefined) lists.set(name, source.allowedModels);
  return lists;
}

/** One warning at start-up when several namespaces are watched and a source there may claim any model. */
function warnOnNamespaceTrustGap(kubernetes: KubernetesDiscovery, config: Config, logger: Logger): void {
  const lists = allowLists(config);
  const gap = namespaceTrustGap(kubernetes.sources.map((s) => ({ name: s.name, namespace: s.namespace, restricted: lists.has(s.name) })));
  if (gap === undefined) return;
  logger.warn(
    { namespaces: gap.namespaces, sourcesWithoutAllowedModels: gap.unrestricted },
    'discovery watches several namespaces and some sources have no allowedModels: any pod they select can claim any model and receive its prompts',
  );
}

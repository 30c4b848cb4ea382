/**
 * The load view and how many router replicas share the engines: the count
 * (configured, or watched from the router's own Service) scales this
 * replica's share of each engine's safe-start step and queue budget.
 */
import { ReplicaWatch } from '../../discovery/kubernetes/replica-watch.ts';
import type { Config } from '../config/schema.ts';
import { waitsForAdapterSlot } from '../load/extractors/lora-requests-info.ts';
import { LoadView } from '../load/load-view.ts';
import { ReplicaCount } from '../load/replica-count.ts';
import type { Logger } from '../log.ts';
import { kubeConnection, type Environment } from './kube-connection.ts';

/** The load view and the replica count it divides by. */
export interface Load {
  /** How many replicas share the engines (counted from the router's Service, or configured). */
  readonly replicas: ReplicaCount;
  /** Counts them from the router's own Service; undefined without load.replicasFromService. Started and stopped by the router. */
  readonly replicaWatch: ReplicaWatch | undefined;
  /** Per-endpoint load, read synchronously by scheduling, admission and the metrics. */
  readonly view: LoadView;
}

/** Builds the load view; nothing is started. @throws Error when load.replicasFromService cannot reach the Kubernetes API. */
export function buildLoad(config: Config, env: Environment, logger: Logger): Load {
  const replicas = new ReplicaCount(config.load.replicas);
  const watch = replicaWatch(config, env, replicas, logger);
  const view = new LoadView({
    maxScrapeAgeMs: config.scrape.maxAgeMs ?? 3 * config.scrape.intervalMs,
    defaultCapacity: config.load.defaultCapacity,
    ejection: config.load.ejection,
    // Without admission.maxWaiting (each engine's adaptive allowance), the safe start still steps by one request past what an engine runs.
    safeStart: { ...config.load.safeStart, queueBudget: config.admission.maxWaiting ?? 1, replicas },
    replicas,
    queueWaitsElsewhere: waitsForAdapterSlot,
    fleetMirroring: config.admission.maxWaiting === undefined ? 'burst' : 'always',
  });
  return { replicas, replicaWatch: watch, view };
}

/** The watch that counts this router's replicas into `replicas`, when load.replicasFromService names its Service. */
function replicaWatch(config: Config, env: Environment, replicas: ReplicaCount, logger: Logger): ReplicaWatch | undefined {
  const service = config.load.replicasFromService;
  if (service === undefined) return undefined;
  return ReplicaWatch.connect(kubeConnection(config, env), service, config.discovery, {
    counted: (count) => {
      replicas.counted(count);
      if (count === 0) logger.warn({ service }, "load.replicasFromService: the Service lists no pods, not even this one; is it the router's own Service? Counting this replica alone");
      else logger.info({ service, replicas: count }, 'router replicas counted from the Service');
    },
    failing: (error) => logger.warn({ service, error }, 'router replicas cannot be counted from the Service; keeping the last count (or load.replicas)'),
    recovered: () => logger.info({ service }, 'router replicas counted from the Service again'),
  });
}

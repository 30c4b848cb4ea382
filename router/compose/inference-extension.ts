/**
 * The Gateway API Inference Extension's request-time objects: model rewrites
 * (the config file's, then the InferenceModelRewrites of the watched pools)
 * and InferenceObjective priorities. Discovery watches the objects; this
 * turns each snapshot into the tables the classify and admission stages read.
 */
import type { KubernetesDiscovery } from '../../discovery/kubernetes/kubernetes-discovery.ts';
import { debugListWatchStatus } from '../../discovery/kubernetes/list-watcher.ts';
import type { RewriteRules } from '../../discovery/kubernetes/inference-objects.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import { InferenceExtensionMetrics } from '../metrics/inference-extension-metrics.ts';
import type { RouterMetrics } from '../metrics/metrics.ts';
import { ModelRewrites } from '../request/model-rewrite.ts';
import { ObjectivePriorities } from '../request/objective-priority.ts';

/** The rewrite and objective tables; the router starts the watch that feeds them. */
export interface InferenceExtension {
  readonly rewrites: ModelRewrites;
  readonly objectives: ObjectivePriorities;
  /** Starts following the cluster's objects (when some discovery source is an InferencePool). */
  start(): void;
  /** `/debug/endpoints`'s `inferenceExtension` part: the rules and objectives in force, and the watches. */
  debugStatus(): unknown;
}

/** Builds the tables from the config file; the cluster's objects join them once {@link InferenceExtension.start} runs. */
export function buildInferenceExtension(config: Config, deps: { readonly kubernetes: KubernetesDiscovery | undefined; readonly metrics: RouterMetrics; readonly logger: Logger }): InferenceExtension {
  const counters = new InferenceExtensionMetrics(deps.metrics.registry);
  const rewrites = new ModelRewrites(Math.random, (rule, target) => counters.countRewrite(rule, target));
  const objectives = new ObjectivePriorities(config.inferenceExtension, () => counters.countUnknownObjective());
  const configured: RewriteRules[] = config.inferenceExtension.modelRewrites.map(({ name, rules }) => ({
    id: `config/${name}`,
    createdAt: 0,
    rules: rules.map((rule) => ({ matches: rule.matches.map((match) => match.model.value), targets: rule.targets.map((target) => ({ model: target.modelRewrite, weight: target.weight })) })),
  }));
  rewrites.set(configured, []);
  const watch = deps.kubernetes?.inferenceObjects;
  let logged = '';
  return {
    rewrites,
    objectives,
    start: () =>
      watch?.start((objects) => {
        rewrites.set(configured, objects.rewrites);
        objectives.set(objects.objectives);
        // Every re-list delivers a snapshot: log only what changed.
        const inForce = { rewrites: rewrites.rules, objectives: Object.fromEntries(objectives.classes) };
        const key = JSON.stringify(inForce);
        if (key !== logged) deps.logger.info(inForce, 'model rewrites and InferenceObjective classes in force');
        logged = key;
      }),
    debugStatus: () => ({
      rewrites: rewrites.rules,
      objectives: Object.fromEntries(objectives.classes),
      watches: watch?.status().map(debugListWatchStatus) ?? [],
    }),
  };
}

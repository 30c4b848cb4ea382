/**
 * Metrics of the Gateway API Inference Extension's request-time objects:
 * model rewrites by rule and target, and requests that named an unknown
 * InferenceObjective. Labels take rule ids and target model names from the
 * config file and the cluster's objects only, never a client's model name,
 * so their number stays bounded by what operators wrote.
 */
import { Counter, type Registry } from 'prom-client';

/** The counters, registered on the router's registry. */
export class InferenceExtensionMetrics {
  readonly #rewrites: Counter<'rewrite' | 'target'>;
  readonly #unknownObjectives: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#rewrites = new Counter({
      name: 'switchyard_model_rewrites_total',
      help: 'Requests sent as another model by a rewrite rule, by rules (InferenceModelRewrite namespace/name, or config/<name>) and target model.',
      labelNames: ['rewrite', 'target'],
      registers,
    });
    this.#unknownObjectives = new Counter({
      name: 'switchyard_inference_objective_unknown_total',
      help: 'Requests from a trusted proxy whose objective header named no InferenceObjective of a watched pool; they ran at normal priority.',
      registers,
    });
  }

  countRewrite(rewrite: string, target: string): void {
    this.#rewrites.inc({ rewrite, target });
  }

  countUnknownObjective(): void {
    this.#unknownObjectives.inc();
  }
}

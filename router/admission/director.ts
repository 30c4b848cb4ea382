/**
 * The per-request decision: read the load view's candidates for the model,
 * let the model's policy order them, then admit. One synchronous call, no
 * I/O, so it costs microseconds on the hot path.
 */
import type { DecisionOutcome, EndpointLoad, RequestFacts, RoutingPolicy } from '../policy/policy.ts';
import { admit, type AdmissionDecision } from './admission.ts';
import type { Priority } from './priority.ts';
import { isSaturated, type SaturationInputs, type SaturationThresholds } from './saturation.ts';

/** What the director reads from the load view. */
export interface DirectorView<T> {
  /** Refreshes the view's clock before a decision. */
  tick(): void;
  candidates(model: string): readonly T[];
}

/** What the director needs per decision besides the view. */
export interface DirectorDeps<T> {
  readonly view: DirectorView<T>;
  policyFor(model: string): RoutingPolicy;
  readonly thresholds: SaturationThresholds;
  /** Counts a decision by policy name and outcome. */
  countDecision(policy: string, outcome: DecisionOutcome): void;
}

/** Decides, per request, which endpoints to try. */
export class Director<T extends EndpointLoad & SaturationInputs> {
  readonly #deps: DirectorDeps<T>;
  readonly #saturated: Readonly<Record<Priority, (endpoint: T) => boolean>>;

  constructor(deps: DirectorDeps<T>) {
    this.#deps = deps;
    this.#saturated = {
      high: (endpoint) => isSaturated(endpoint, deps.thresholds, 'high'),
      normal: (endpoint) => isSaturated(endpoint, deps.thresholds, 'normal'),
      low: (endpoint) => isSaturated(endpoint, deps.thresholds, 'low'),
    };
  }

  /** Orders the candidates and admits, or says every candidate is saturated, or rejects. */
  decide(facts: RequestFacts, priority: Priority = 'normal'): AdmissionDecision<T> {
    const deps = this.#deps;
    deps.view.tick();
    const policy = deps.policyFor(facts.model);
    const saturated = this.#saturated[priority];
    const { ordered, outcome } = policy.order(facts, deps.view.candidates(facts.model), saturated);
    if (ordered.length > 0) deps.countDecision(policy.name, outcome);
    return admit(facts.model, ordered, saturated);
  }
}

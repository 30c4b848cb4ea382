/**
 * The schedule stage of a request: read the load view's candidates for the
 * model, run the model's profile with the saturation test for the request's
 * priority, count the decision. One synchronous call, no I/O, so it costs
 * microseconds on the hot path; admission calls it again for a queued
 * request each time load changes.
 */
import type { AssignmentMove, Candidate, DecisionOutcome, RequestFacts } from './candidate.ts';
import type { ProfileRegistry } from './profiles/presets.ts';
import type { Priority } from './priority.ts';
import type { Schedule } from './profiles/profile.ts';
import { homeRoom, isSaturated, type HomeRoom, type SaturationThresholds } from './saturation.ts';

/** What the scheduler reads from the load view. */
export interface SchedulerView<T> {
  /** Refreshes the view's clock before a decision. */
  tick(): void;
  candidates(model: string): readonly T[];
}

/** Collaborators of the {@link Scheduler}. */
export interface SchedulerDeps<T> {
  readonly view: SchedulerView<T>;
  readonly profiles: ProfileRegistry;
  readonly thresholds: SaturationThresholds;
  /** Counts a decision by profile name and outcome. */
  countDecision(profile: string, outcome: DecisionOutcome): void;
  /** Counts a session moved off its shared assignment, by why. */
  countMove?(reason: AssignmentMove): void;
  /** A request for a LoRA adapter goes to `target` first (counted; the LoRA walk sees it there before the next scrape). */
  adapterSent?(target: T, adapter: string): void;
}

export class Scheduler<T extends Candidate> {
  readonly #deps: SchedulerDeps<T>;
  readonly #saturated: Readonly<Record<Priority, (endpoint: T) => boolean>>;
  readonly #homeRoom: Readonly<Record<Priority, (endpoint: T) => HomeRoom>>;

  constructor(deps: SchedulerDeps<T>) {
    this.#deps = deps;
    this.#saturated = {
      high: (endpoint) => isSaturated(endpoint, deps.thresholds, 'high'),
      normal: (endpoint) => isSaturated(endpoint, deps.thresholds, 'normal'),
      low: (endpoint) => isSaturated(endpoint, deps.thresholds, 'low'),
    };
    this.#homeRoom = {
      high: (endpoint) => homeRoom(endpoint, deps.thresholds, 'high'),
      normal: (endpoint) => homeRoom(endpoint, deps.thresholds, 'normal'),
      low: (endpoint) => homeRoom(endpoint, deps.thresholds, 'low'),
    };
  }

  /** Which endpoints to try for the request, or that every candidate is saturated, or that none serves the model. */
  schedule(facts: RequestFacts, priority: Priority = 'normal'): Schedule<T> {
    const deps = this.#deps;
    deps.view.tick();
    const profile = deps.profiles.forModel(facts.model);
    const schedule = profile.schedule(facts, deps.view.candidates(facts.model), this.#saturated[priority], this.#homeRoom[priority]);
    if (schedule.kind === 'admit') {
      deps.countDecision(profile.name, schedule.outcome);
      if (schedule.moved !== undefined) deps.countMove?.(schedule.moved);
      if (facts.loraBaseModel !== undefined) deps.adapterSent?.(schedule.attempts[0] as T, facts.model);
    }
    return schedule;
  }
}

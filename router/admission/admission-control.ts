/**
 * Admission for one request, end to end: router-wide pressure before the
 * body is read, then policy + saturation after routing facts are known, then
 * the optional wait queue, and a 429 with a Retry-After derived from the
 * fleet's drain rate when nothing can take the request. Shedding does no
 * upstream I/O and allocates little: it must stay cheap at thousands of
 * rejections per second.
 */
import { SwitchyardError } from '../errors/errors.ts';
import type { EndpointView } from '../load/endpoint-view.ts';
import type { ShedReason as AnyShedReason } from '../metrics/label-values.ts';
import type { DecisionOutcome, RequestFacts } from '../scheduling/candidate.ts';
import type { Schedule } from '../scheduling/profiles/profile.ts';
import type { Priority } from '../scheduling/priority.ts';
import { pressureReason, type PressureGauges, type PressureLimits, type PressureReason } from './router-pressure.ts';
import { retryAfterSeconds, wholeRetrySeconds, type DrainInputs } from './retry-after.ts';
import type { WaitQueue } from './wait-queue.ts';

/** Why admission sheds a request: any shed reason but `body_budget`, which the request's body reader gives. */
export type ShedReason = Exclude<AnyShedReason, 'body_budget'>;

/** What admission records. */
export interface AdmissionObserver {
  shed(reason: ShedReason, priority: Priority): void;
  /** A request of `model` enters the router queue (which may still refuse it at once as full); {@link waited} follows it. */
  queued(priority: Priority, model: string): void;
  /** A queued request of `model` left the queue after `seconds`, admitted or not. */
  waited(seconds: number, model: string): void;
}

/**
 * What admission reads of a candidate: its drain, and whether its capacity
 * is known (undefined while the safe start is still finding it).
 */
export interface AdmissionCandidate extends DrainInputs, Pick<EndpointView, 'id' | 'capacity'> {}

/** Collaborators of {@link AdmissionControl}. */
export interface AdmissionControlDeps<T extends AdmissionCandidate> {
  decide(facts: RequestFacts, priority: Priority): Schedule<T>;
  /** The endpoints serving `model` (no decision, no side effect: the queue gate reads their drain). */
  servingModel(model: string): readonly T[];
  readonly queue: WaitQueue<T>;
  readonly limits: PressureLimits;
  gauges(): PressureGauges;
  /** Fixed engine queue bound; undefined: each endpoint's own allowance. */
  readonly maxWaiting: number | undefined;
  /**
   * Longest a request waits in the router queue for its own engine (the
   * schedule's `waitsFor`) before it goes where new work goes (ms); see
   * router/scheduling/saturation.ts, homeWaitMs.
   */
  homeWaitMs(engine: T): number;
  readonly observer: AdmissionObserver;
  now(): number;
}

/** An admitted request: where it goes, and how that was decided. */
export interface Admitted<T> {
  readonly kind: 'admit';
  /** The endpoint to try first, then the retry candidates. */
  readonly attempts: readonly T[];
  /** How the scheduler decided (the decisions metric's `outcome`); undefined for decisions made outside the scheduler (tests). */
  readonly outcome?: DecisionOutcome | undefined;
}

/** The outcome of admission after the body was read. */
export type AdmissionResult<T> =
  | Admitted<T>
  | { readonly kind: 'reject'; readonly error: SwitchyardError }
  | { readonly kind: 'gone' };

const PRESSURE_MESSAGES: Readonly<Record<PressureReason, [SwitchyardError['code'], string]>> = {
  in_flight_cap: ['SWITCHYARD_ROUTER_BUSY', 'The router is handling as many requests as it allows; retry shortly.'],
  connection_cap: ['SWITCHYARD_ROUTER_BUSY', 'The router has as many open connections as it allows; retry shortly.'],
  event_loop_lag: ['SWITCHYARD_EVENT_LOOP_LAG', 'The router is momentarily overloaded; retry shortly.'],
};

/**
 * The share of the queue's deadline the expected wait may fill. The estimate
 * is noisy (arrivals and the rate both vary), and a request admitted at the
 * very edge would as likely wait the whole deadline and then be shed: the
 * worst answer of all.
 */
const GATE_SHARE = 0.8;

export class AdmissionControl<T extends AdmissionCandidate> {
  readonly #deps: AdmissionControlDeps<T>;

  constructor(deps: AdmissionControlDeps<T>) {
    this.#deps = deps;
  }

  /** True when a saturated request may wait in the router queue (so its client's departure matters). */
  get mayQueue(): boolean {
    return this.#deps.queue.enabled;
  }

  /**
   * Router-wide limits, checked before the body is read. Returns the 429 to
   * send (with Connection: close) or undefined to go on.
   */
  checkPressure(priority: Priority): SwitchyardError | undefined {
    const reason = pressureReason(this.#deps.limits, this.#deps.gauges(), priority);
    if (reason === undefined) return undefined;
    this.#deps.observer.shed(reason, priority);
    const [code, message] = PRESSURE_MESSAGES[reason];
    return new SwitchyardError(code, message, { retryAfterSeconds: 1 });
  }

  /**
   * Admits, queues, or sheds a request whose routing facts are known.
   * `signal` fires when the client leaves. A request queues only while the
   * queue ahead of it drains within the queue's deadline at the rate the
   * model's engines finish requests: a burst the fleet serves within the
   * deadline is served whole, and what it cannot is shed at once, with a
   * Retry-After of when it could, instead of waiting out the deadline.
   * `tenant` (the API key's; undefined without keys) takes its turn in the
   * queue against other tenants of the same priority.
   *
   * A request decided at once gets its answer synchronously, not as a
   * promise: an admitted request counts against its endpoint only once it is
   * sent, so the caller must send it before anything else is decided.
   * Requests that resume together (their Redis lookups answered in one
   * read) would otherwise all be decided on the same free room.
   */
  admit(facts: RequestFacts, priority: Priority, signal: AbortSignal, tenant?: string): AdmissionResult<T> | Promise<AdmissionResult<T>> {
    const deps = this.#deps;
    let decision = deps.decide(facts, priority);
    // Without a router queue a request cannot wait for its own engine: it goes where new work goes.
    if (decision.kind === 'saturated' && decision.waitsFor !== undefined && !deps.queue.enabled) decision = deps.decide({ ...facts, mayWaitForHome: false }, priority);
    if (decision.kind !== 'saturated') return decision;
    if (!deps.queue.enabled) return this.#shed('saturated', priority, facts.model, decision.candidates);
    const overDeadlineS = this.#expectedWaitBeyondDeadline(this.#drainingFor(facts, decision), priority, tenant);
    if (overDeadlineS > 0) return this.#shed('queue_full', priority, facts.model, decision.candidates, overDeadlineS);
    return this.#wait(facts, priority, signal, tenant, decision);
  }

  /** Waits in the router queue for a request every candidate turned away (`decision`). */
  async #wait(facts: RequestFacts, priority: Priority, signal: AbortSignal, tenant: string | undefined, decision: Schedule<T> & { readonly kind: 'saturated' }): Promise<AdmissionResult<T>> {
    const deps = this.#deps;
    // Requests of one model and priority (and own engine) get the same answer from a saturated fleet.
    const key = `${facts.model}\u0000${priority}\u0000${facts.pinnedEndpoint ?? ''}\u0000${decision.waitsFor?.id ?? ''}`;
    const waitedEnough = { ...facts, mayWaitForHome: false };
    const homeWaitMs = decision.waitsFor === undefined ? 0 : deps.homeWaitMs(decision.waitsFor);
    const started = performance.now();
    const decideQueued = () => deps.decide(performance.now() - started < homeWaitMs ? facts : waitedEnough, priority);
    let outcome: Awaited<ReturnType<typeof deps.queue.wait>>;
    deps.observer.queued(priority, facts.model);
    try {
      outcome = await deps.queue.wait(priority, decideQueued, signal, key, tenant);
    } finally {
      deps.observer.waited((performance.now() - started) / 1000, facts.model);
    }
    switch (outcome.kind) {
      case 'admit':
      case 'reject':
      case 'gone':
        return outcome;
      case 'saturated':
        return this.#shed('saturated', priority, facts.model, outcome.candidates);
      case 'full':
        return this.#shed('queue_full', priority, facts.model, decision.candidates);
      case 'expired':
        return this.#shed('queue_timeout', priority, facts.model, decision.candidates);
    }
  }

  /**
   * Seconds by which the expected wait of a newcomer of `priority` and
   * `tenant` (the queue ahead of it in its tenant's turn, over the candidates' drain rate) passes
   * {@link GATE_SHARE} of the queue's deadline; 0 when it fits, when nobody
   * is ahead (it waits only for the engines' current work, which the
   * deadline bounds), or while the rate says little of what the fleet will
   * drain: some candidate's capacity is still unknown (the safe start holds
   * it below what it can take) or nothing finished lately. The deadline
   * then decides.
   */
  #expectedWaitBeyondDeadline(candidates: readonly T[], priority: Priority, tenant: string | undefined): number {
    const deps = this.#deps;
    const ahead = deps.queue.ahead(priority, tenant);
    if (ahead === 0) return 0;
    const now = deps.now();
    let rate = 0;
    for (const candidate of candidates) {
      if (candidate.capacity === undefined) return 0;
      rate += candidate.drainRate(now);
    }
    if (rate <= 0) return 0;
    return Math.max(0, (ahead + 1) / rate - (GATE_SHARE * deps.queue.maxWaitMs) / 1000);
  }

  /**
   * The engines whose drain serves a saturated request: its candidates, or, when it waits for its
   * own engine, every engine serving its model, where it goes after that wait. Its own engine
   * alone drains a fraction of the queue ahead, which waits for every engine: a session's
   * request behind 2,000 others was shed as if one engine had to serve them all. Read, not
   * decided again: a second decision would count itself and record an adapter as sent.
   */
  #drainingFor(facts: RequestFacts, decision: Schedule<T> & { readonly kind: 'saturated' }): readonly T[] {
    return decision.waitsFor === undefined ? decision.candidates : this.#deps.servingModel(facts.model);
  }

  #shed(reason: ShedReason, priority: Priority, model: string, candidates: readonly T[], retryAfterS?: number): AdmissionResult<T> {
    const deps = this.#deps;
    deps.observer.shed(reason, priority);
    const seconds = retryAfterS !== undefined ? wholeRetrySeconds(retryAfterS) : retryAfterSeconds(candidates, deps.maxWaiting, deps.queue.length, deps.now());
    const code = reason === 'queue_timeout' ? 'SWITCHYARD_QUEUE_TIMEOUT' : 'SWITCHYARD_OVERLOADED';
    const message =
      reason === 'queue_timeout'
        ? `Every endpoint serving \`${model}\` stayed saturated while the request waited; retry after ${seconds} s.`
        : reason === 'queue_full'
          ? `Every endpoint serving \`${model}\` is saturated and the router queue is full; retry after ${seconds} s.`
          : `Every endpoint serving \`${model}\` is saturated; retry after ${seconds} s.`;
    return { kind: 'reject', error: new SwitchyardError(code, message, { retryAfterSeconds: seconds }) };
  }
}

/**
 * The load view: per endpoint, the router's own live in-flight count and
 * recent upstream outcomes, plus the per-model candidate lists policies
 * choose from. Everything is read synchronously; nothing here does I/O.
 *
 * Scraped engine gauges, staleness and ejection join this view in later
 * work; policies already read it through the narrow {@link EndpointLoad}.
 */
import type { Endpoint, EndpointSet } from '../../discovery/endpoint.ts';

/** Upstream failure kinds the proxy reports; also the metric label values. */
export const UPSTREAM_FAILURE_KINDS = ['connect', 'reset', 'timeout', 'midstream', 'status_5xx'] as const;
/** One of {@link UPSTREAM_FAILURE_KINDS}. */
export type UpstreamFailureKind = (typeof UPSTREAM_FAILURE_KINDS)[number];

/** Live state of one endpoint. Mutated only by the load view. */
export class EndpointState {
  /** The endpoint as its source last described it. */
  endpoint!: Endpoint;
  /** `scheme://host:port` of the endpoint, for the HTTP client. */
  origin = '';
  /** Path prefix of the endpoint's base URL ('' for none), prepended to request paths. */
  basePath = '';
  /** Requests the router has open to this endpoint right now. */
  inFlight = 0;
  /** Failures since the last success. */
  consecutiveFailures = 0;
  /** Epoch ms and kind of the last failure, if any. */
  lastFailureAt: number | undefined;
  lastFailureKind: UpstreamFailureKind | undefined;
  /** False once the endpoint has left the endpoint set. */
  present = true;

  constructor(endpoint: Endpoint) {
    this.describe(endpoint);
  }

  /** Adopts the source's latest description of the endpoint. */
  describe(endpoint: Endpoint): void {
    if (this.endpoint?.url !== endpoint.url) {
      const url = new URL(endpoint.url);
      this.origin = url.origin;
      this.basePath = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
    }
    this.endpoint = endpoint;
  }

  get id(): string {
    return this.endpoint.id;
  }

  /** Ready, not draining, present, and its models are known. */
  get routable(): boolean {
    const e = this.endpoint;
    return this.present && e.ready && !e.draining && e.models !== undefined;
  }
}

const NO_CANDIDATES: readonly EndpointState[] = Object.freeze([]);

/** Owns the {@link EndpointState}s and indexes them by model. */
export class LoadView {
  #states = new Map<string, EndpointState>();
  #byModel = new Map<string, readonly EndpointState[]>();
  #knownModels = new Set<string>();
  #version = 0;
  #synced = false;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** True once the first endpoint set (even an empty one) has arrived. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Version of the endpoint set the view reflects (0 before the first). */
  get version(): number {
    return this.#version;
  }

  /**
   * Adopts a new endpoint set. An endpoint that stays keeps its state object
   * (and so its counters); one that leaves is marked not present, and
   * requests still open to it settle on its old state object.
   */
  update(set: EndpointSet): void {
    const next = new Map<string, EndpointState>();
    for (const endpoint of set.endpoints) {
      const state = this.#states.get(endpoint.id) ?? new EndpointState(endpoint);
      state.describe(endpoint);
      next.set(endpoint.id, state);
    }
    for (const [id, prior] of this.#states) if (!next.has(id)) prior.present = false;
    this.#states = next;
    this.#version = set.version;
    this.#synced = true;
    this.#reindex();
  }

  #reindex(): void {
    const byModel = new Map<string, EndpointState[]>();
    const known = new Set<string>();
    for (const state of this.#states.values()) {
      for (const model of state.endpoint.models ?? []) {
        known.add(model);
        if (!state.routable) continue;
        let list = byModel.get(model);
        if (!list) byModel.set(model, (list = []));
        list.push(state);
      }
    }
    this.#byModel = byModel;
    this.#knownModels = known;
  }

  /** Routable endpoints that serve `model`; empty when none. Do not mutate. */
  candidates(model: string): readonly EndpointState[] {
    return this.#byModel.get(model) ?? NO_CANDIDATES;
  }

  /** True when any endpoint in the set (routable or not) is known to serve `model`. */
  knowsModel(model: string): boolean {
    return this.#knownModels.has(model);
  }

  /** Models served by at least one routable endpoint, sorted. */
  routableModels(): string[] {
    return [...this.#byModel.keys()].sort();
  }

  /** Every known model, routable or not. */
  knownModels(): ReadonlySet<string> {
    return this.#knownModels;
  }

  /** Every endpoint in the current set. */
  all(): Iterable<EndpointState> {
    return this.#states.values();
  }

  /** A request was sent to `state`; pair with exactly one {@link settle}. */
  begin(state: EndpointState): void {
    state.inFlight++;
  }

  /**
   * A request to `state` ended. `failure` is set when the engine failed it
   * (not when the client went away or the router refused it).
   */
  settle(state: EndpointState, failure?: UpstreamFailureKind): void {
    state.inFlight = Math.max(0, state.inFlight - 1);
    this.#record(state, failure);
  }

  /** Records an outcome without an in-flight count (e.g. a failed connect attempt). */
  #record(state: EndpointState, failure: UpstreamFailureKind | undefined): void {
    if (failure === undefined) {
      state.consecutiveFailures = 0;
      return;
    }
    state.consecutiveFailures++;
    state.lastFailureAt = this.#now();
    state.lastFailureKind = failure;
  }
}

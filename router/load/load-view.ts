/**
 * The load view: per endpoint, the router's live in-flight count, the
 * engine's last scraped gauges with their age, requests sent since that
 * scrape, recent failures and ejection; per model, the routable candidates.
 * Everything is read synchronously; nothing here does I/O.
 */
import type { EndpointSet } from '../../discovery/endpoint.ts';
import { recordFailure, type EjectionSettings } from './ejection.ts';
import { EndpointState, type LoadClockAndSettings, type UpstreamFailureKind } from './endpoint-state.ts';
import type { ModelGauges } from './exposition-scanner.ts';
import type { SafeStartSettings } from './safe-start.ts';

export { EndpointState, UPSTREAM_FAILURE_KINDS, type UpstreamFailureKind } from './endpoint-state.ts';

/** Settings of the load view. */
export interface LoadSettings {
  /** A scrape older than this is stale (ms). */
  readonly maxScrapeAgeMs: number;
  /** Capacity assumed for load-score normalisation when unknown (sequences). */
  readonly defaultCapacity: number;
  readonly ejection: EjectionSettings;
  /** The safe start for endpoints of unknown capacity (see safe-start.ts); absent: none. */
  readonly safeStart?: SafeStartSettings;
}

/** Receives ejection events (for logs and metrics). */
export type EjectionListener = (state: EndpointState, untilMs: number) => void;

/** Told once per endpoint that left the set, after its `present` turned false; must not throw. */
export type DepartureListener = (state: EndpointState) => void;

const NO_CANDIDATES: readonly EndpointState[] = Object.freeze([]);
/** Requests sent this shortly before a scrape began are taken as not counted by it (ms). */
const SEND_GUARD_MS = 25;
/** Send times remembered per endpoint for that guard. */
const RECENT_SENDS = 32;

/** Owns the {@link EndpointState}s and indexes them by model. */
export class LoadView {
  #states = new Map<string, EndpointState>();
  #byModel = new Map<string, readonly EndpointState[]>();
  #knownModels = new Set<string>();
  #version = 0;
  #synced = false;
  readonly #clock: { now: number; maxScrapeAgeMs: number; defaultCapacity: number; safeStart: SafeStartSettings | undefined };
  readonly #readClock: () => number;
  readonly #ejection: EjectionSettings;
  onEjection: EjectionListener | undefined;
  /**
   * Hears every departure. This view is the one place that decides whether
   * an endpoint is present; whatever keeps per-endpoint records outside it
   * (metric series) drops them here and checks `present` on later writes.
   */
  onDeparture: DepartureListener | undefined;

  constructor(settings: LoadSettings, now: () => number = Date.now) {
    this.#readClock = now;
    this.#clock = { now: now(), maxScrapeAgeMs: settings.maxScrapeAgeMs, defaultCapacity: settings.defaultCapacity, safeStart: settings.safeStart };
    this.#ejection = settings.ejection;
  }

  /** Time and settings the endpoint states derive their values from. */
  get clock(): LoadClockAndSettings {
    return this.#clock;
  }

  /** Re-reads the clock. Call before a batch of reads (a routing decision, a debug view). */
  tick(): void {
    this.#clock.now = this.#readClock();
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
   * (and so its counters); one that leaves is marked not present for good
   * (should it come back, it gets a new state object), requests still open
   * to it settle on its old state object, and {@link onDeparture} hears of it.
   */
  update(set: EndpointSet): void {
    const next = new Map<string, EndpointState>();
    for (const endpoint of set.endpoints) {
      const state = this.#states.get(endpoint.id) ?? new EndpointState(endpoint, this.#clock);
      state.describe(endpoint);
      next.set(endpoint.id, state);
    }
    const departed: EndpointState[] = [];
    for (const [id, prior] of this.#states) {
      if (next.has(id)) continue;
      prior.present = false;
      departed.push(prior);
    }
    this.#states = next;
    this.#version = set.version;
    this.#synced = true;
    this.#reindex();
    for (const state of departed) this.onDeparture?.(state);
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

  /** Routable endpoints that serve `model` (ejected ones included); empty when none. Do not mutate. */
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

  /** Every endpoint in the current set. */
  all(): Iterable<EndpointState> {
    return this.#states.values();
  }

  /** Number of endpoints in the current set. */
  get size(): number {
    return this.#states.size;
  }

  /**
   * A request was sent to `state`. Returns its token to hand back to
   * {@link settle}; pair every begin with exactly one settle.
   */
  begin(state: EndpointState): number {
    state.inFlight++;
    state.sentSinceScrape++;
    const sends = state.recentSends;
    if (sends.length === RECENT_SENDS) sends.shift();
    sends.push(this.#clock.now);
    state.touch();
    state.safeStart?.sent(state.inFlight);
    return state.sentTotal++;
  }

  /**
   * The first response byte of stream `token` (from {@link begin}) arrived
   * `ttfbMs` after it was sent: how fast the engine starts new work.
   */
  firstByte(state: EndpointState, token: number, ttfbMs: number): void {
    state.safeStart?.firstByte(token, ttfbMs, state.inFlight, state.sentTotal);
  }

  /**
   * A request to `state` ended. `failure` is set when the engine failed it
   * (never for a client that went away or a request the router refused).
   */
  settle(state: EndpointState, token: number, failure?: UpstreamFailureKind): void {
    state.inFlight = Math.max(0, state.inFlight - 1);
    // Sent after the last scrape began: it was not in that scrape's numbers.
    if (token >= state.countedBefore) state.sentSinceScrape = Math.max(0, state.sentSinceScrape - 1);
    else state.doneSinceScrape++;
    if (state.pendingMark >= 0 && token >= state.pendingMark) state.settledSincePendingMark++;
    state.touch();
    state.recordCompletion(this.#readClock());
    state.recordOutcome(failure !== undefined);
    if (state.safeStart !== undefined) {
      this.tick();
      state.safeStart.completed(state.inFlight, failure === undefined, state.unscraped);
    }
    if (failure === undefined) {
      state.consecutiveFailures = 0;
      return;
    }
    const now = this.#readClock();
    state.consecutiveFailures++;
    state.lastFailureAt = now;
    state.lastFailureKind = failure;
    if (recordFailure(state, failure, now, this.#ejection, this.ejectedCount(now), this.#states.size)) {
      this.onEjection?.(state, state.ejectedUntil);
    }
  }

  /** Endpoints ejected at `now`. */
  ejectedCount(now = this.#readClock()): number {
    let count = 0;
    for (const state of this.#states.values()) if (state.ejectedUntil > now) count++;
    return count;
  }

  /**
   * A scrape of `state`'s engine is about to be sent. Requests sent from now
   * on may or may not reach the engine before it answers, so the scrape will
   * be taken not to count them (over-counting load is the safe error).
   */
  markScrapeStart(state: EndpointState): void {
    // A request sent just before the scrape may still be on its way to the engine when the
    // engine answers the scrape (they travel on different connections): treat it as uncounted.
    const now = this.#readClock();
    let recent = 0;
    for (let i = state.recentSends.length - 1; i >= 0 && now - (state.recentSends[i] as number) <= SEND_GUARD_MS; i--) recent++;
    state.pendingMark = state.sentTotal - recent;
    state.settledSincePendingMark = 0;
  }

  /**
   * Records a successful scrape of `state`'s engine: gauges summed over the
   * models it serves, KV-cache usage as the highest. Requests sent before the
   * scrape began are now counted by the engine itself.
   */
  recordScrape(state: EndpointState, models: ReadonlyMap<string, ModelGauges>): void {
    let waiting = 0;
    let running = 0;
    let kv: number | undefined;
    for (const gauges of models.values()) {
      waiting += gauges.waiting;
      running += gauges.running;
      if (gauges.kvCacheUsage !== undefined) kv = Math.max(kv ?? 0, gauges.kvCacheUsage);
    }
    state.scraped = { waiting, running, kvCacheUsage: kv, models, at: this.#readClock() };
    const mark = state.pendingMark >= 0 ? state.pendingMark : state.sentTotal;
    state.countedBefore = mark;
    state.sentSinceScrape = Math.min(state.inFlight, Math.max(0, state.sentTotal - mark - state.settledSincePendingMark));
    state.doneSinceScrape = 0;
    state.pendingMark = -1;
    state.touch();
    // A queue means the engine was full: what was running then is its capacity.
    if (waiting > 0 && running > (state.learnedCapacity ?? 0)) state.learnedCapacity = running;
    // What the scrape counted of ours: open requests sent before it began.
    state.safeStart?.scraped(waiting, running, state.inFlight - state.sentSinceScrape, state.learnedCapacity);
  }
}

/**
 * The load view: per endpoint, the router's live in-flight count, the
 * engine's last scraped gauges with their age, requests sent since that
 * scrape, recent failures and ejection; per model, the routable candidates.
 * Everything is read synchronously; nothing here does I/O.
 */
import type { EndpointSet } from '../../discovery/endpoint.ts';
import type { EjectionSettings } from './ejection.ts';
import type { EndpointAttributes } from './endpoint-attributes.ts';
import { EndpointState } from './endpoint-state.ts';
import type { ModelGauges } from './exposition-scanner.ts';
import type { FleetMirroring, LoadClockAndSettings } from './load-clock.ts';
import type { ReplicaCountReader } from './replica-count.ts';
import type { FleetSafeStartRecord, SafeStartSettings } from './safe-start.ts';
import type { UpstreamFailureKind } from './upstream-failure-kinds.ts';

/** Settings of the load view. */
export interface LoadSettings {
  /** A scrape older than this is stale (ms). */
  readonly maxScrapeAgeMs: number;
  /** Capacity assumed for load-score normalisation when unknown (sequences). */
  readonly defaultCapacity: number;
  readonly ejection: EjectionSettings;
  /** The safe start for endpoints of unknown capacity (see safe-start.ts); absent: none. */
  readonly safeStart?: SafeStartSettings;
  /** Router replicas sharing the engines (counted or configured; see replica-count.ts), for what no shared state holds; absent: unknown. */
  readonly replicas?: ReplicaCountReader | undefined;
  /**
   * True when the queue an endpoint's last scrape showed (its attributes
   * already hold that scrape's plugin data) waits for something other than a
   * batch slot, such as a LoRA adapter slot: then what ran beside it is no
   * measure of the engine's capacity. Absent: every queue is a full batch's.
   */
  readonly queueWaitsElsewhere?: ((attributes: EndpointAttributes) => boolean) | undefined;
  /** See {@link FleetMirroring}; absent: `always`. */
  readonly fleetMirroring?: FleetMirroring;
}

/** Receives ejection events (for logs and metrics). */
export type EjectionListener = (state: EndpointState, untilMs: number) => void;

/** Told once per endpoint that left the set, after its `present` turned false; must not throw. */
export type DepartureListener = (state: EndpointState) => void;

const NO_CANDIDATES: readonly EndpointState[] = Object.freeze([]);

/** What a fleet read says of who shares which engine (router/state/fleet-reply.ts). */
export interface FleetSharing {
  /** Per model, the other replicas with requests of it waiting in their router queues. */
  readonly queuedBy: ReadonlyMap<string, readonly string[]>;
  /** Per engine id, the other replicas with requests open to it. */
  readonly activeAt: ReadonlyMap<string, readonly string[]>;
  /** This replica's id. */
  readonly self: string;
}

/**
 * The replicas that share `state`'s engine evenly, and this one's rank among
 * them by id, while another queues for a model it serves: those queueing,
 * those with requests open there, and this one. Live replicas with nothing
 * there (idle for the model, starting, of an older release that honours no
 * share) get no seat: a seat kept for them would stay empty while the others
 * queue. Undefined when nobody else queues for its models.
 */
function seatsAt(state: EndpointState, sharing: FleetSharing): { readonly replicas: number; readonly rank: number } | undefined {
  let ids: Set<string> | undefined;
  for (const model of state.endpoint.models ?? []) {
    const waiting = sharing.queuedBy.get(model);
    if (waiting === undefined) continue;
    ids ??= new Set();
    for (const id of waiting) ids.add(id);
  }
  if (ids === undefined) return undefined;
  for (const id of sharing.activeAt.get(state.id) ?? []) ids.add(id);
  let rank = 0;
  for (const id of ids) if (id < sharing.self) rank++;
  return { replicas: ids.size + 1, rank };
}

/**
 * Owns the {@link EndpointState}s, the clock they read and the set they
 * belong to, and indexes them by model. Each state keeps its own books; the
 * view tells it what happened, with the time, and relays ejections and
 * departures to listeners.
 */
export class LoadView {
  #states = new Map<string, EndpointState>();
  /** The fleet's safe-start records last read, for endpoints that appear between two reads. */
  #fleetRecords: ReadonlyMap<string, FleetSafeStartRecord> | undefined;
  #byModel = new Map<string, readonly EndpointState[]>();
  #knownModels = new Set<string>();
  /** Adapter id → base model id, as routable endpoints report it. */
  #parents = new Map<string, string>();
  #version = 0;
  #synced = false;
  /** Requests of each model waiting in this replica's router queue (models with none are absent). */
  readonly #queuedByModel = new Map<string, number>();
  readonly #queueWaitsElsewhere: LoadSettings['queueWaitsElsewhere'];
  /** The one clock and settings every state reads; only `now` changes. */
  readonly #clock: Omit<LoadClockAndSettings, 'now'> & { now: number };
  readonly #readClock: () => number;
  onEjection: EjectionListener | undefined;
  /**
   * Hears every departure. This view is the one place that decides whether
   * an endpoint is present; whatever keeps per-endpoint records outside it
   * (metric series) drops them here and checks `present` on later writes.
   */
  onDeparture: DepartureListener | undefined;
  /**
   * Hears that room may have opened between scrapes: a safe-start limit rose
   * (a fast first byte, the fleet's record), or a fleet read shows the other
   * replicas finished requests at an engine (with the fleet mirrored only in
   * bursts; see `LoadSettings.fleetMirroring`). Requests queued for room may go
   * now. Nothing else would wake them before a completion of this replica's
   * or a scrape (a joining replica held its share of a burst for ~500 ms,
   * the time its engines took to finish their first streams).
   */
  onRoomOpened: (() => void) | undefined;
  /**
   * Hears that a send used the whole safe-start limit of an endpoint since
   * its last scrape: the next scrape is the evidence the limit grows on, so
   * the scraper takes it soon (router/load/scraper.ts `scrapeSoon`).
   */
  onAwaitsEvidence: ((state: EndpointState) => void) | undefined;

  constructor(settings: LoadSettings, now: () => number = Date.now) {
    this.#readClock = now;
    this.#queueWaitsElsewhere = settings.queueWaitsElsewhere;
    this.#clock = { now: now(), maxScrapeAgeMs: settings.maxScrapeAgeMs, defaultCapacity: settings.defaultCapacity, safeStart: settings.safeStart, replicas: settings.replicas, ejection: settings.ejection, fleetMirroring: settings.fleetMirroring };
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
      let state = this.#states.get(endpoint.id);
      if (state === undefined) {
        state = new EndpointState(endpoint, this.#clock);
        // A replica joining a warm fleet sees its engines appear after its first read of the
        // fleet's record (at start-up, before discovery): they start from it, not a read later.
        const record = this.#fleetRecords?.get(endpoint.id);
        if (record !== undefined) state.shareSafeStart(record);
      }
      state.describe(endpoint);
      next.set(endpoint.id, state);
    }
    const departed: EndpointState[] = [];
    for (const [id, prior] of this.#states) {
      if (next.has(id)) continue;
      prior.depart();
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
    const parents = new Map<string, string>();
    for (const state of this.#states.values()) {
      for (const model of state.endpoint.models ?? []) {
        known.add(model);
        if (!state.routable) continue;
        let list = byModel.get(model);
        if (!list) byModel.set(model, (list = []));
        list.push(state);
        // Endpoints that disagree (a replica mid-rollout) give the smallest: the same answer in any endpoint order.
        const parent = state.endpoint.adapters?.get(model);
        const prior = parents.get(model);
        if (parent !== undefined && (prior === undefined || parent < prior)) parents.set(model, parent);
      }
    }
    this.#byModel = byModel;
    this.#knownModels = known;
    this.#parents = parents;
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

  /**
   * The base model `model` is a LoRA adapter of, when a routable endpoint
   * reports it so (the lexicographically smallest when they disagree);
   * undefined for base models, models no endpoint gave a parent for, and
   * models with no routable endpoint.
   */
  adapterParent(model: string): string | undefined {
    return this.#parents.get(model);
  }

  /** The endpoint with this id, if it is in the set. */
  byId(id: string): EndpointState | undefined {
    return this.#states.get(id);
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
    const awaited = state.awaitsEvidence;
    const token = state.begin();
    if (!awaited && state.awaitsEvidence) this.onAwaitsEvidence?.(state);
    return token;
  }

  /**
   * The first response byte of stream `token` (from {@link begin}) arrived
   * `ttfbMs` after it was sent: how fast the engine starts new work.
   */
  firstByte(state: EndpointState, token: number, ttfbMs: number): void {
    const limit = state.concurrencyLimit;
    state.firstByte(token, ttfbMs);
    // The safe start grew on a fast first byte: requests queued for room may go now, not at the
    // next completion, which for a stream can be a whole answer away.
    if (limit !== undefined && state.concurrencyLimit !== limit) this.onRoomOpened?.();
  }

  /**
   * A request to `state` ended. `failure` is set when the engine failed it
   * (never for a client that went away or a request the router refused).
   * `serviceMs`: how long a complete successful answer took, send to last byte.
   */
  settle(state: EndpointState, token: number, failure?: UpstreamFailureKind, serviceMs?: number): void {
    const now = this.#readClock();
    // The safe start reads whether the endpoint was ever scraped, at the current time.
    if (state.safeStart !== undefined) this.#clock.now = now;
    if (state.settle(token, now, failure, this, serviceMs)) this.onEjection?.(state, state.ejectedUntil);
  }

  /** A request of `model` began waiting in this replica's router queue; pair with {@link queueLeft}. */
  queueEntered(model: string): void {
    this.#queuedByModel.set(model, (this.#queuedByModel.get(model) ?? 0) + 1);
  }

  /** A request of `model` left the router queue, admitted or not. */
  queueLeft(model: string): void {
    const queued = (this.#queuedByModel.get(model) ?? 0) - 1;
    if (queued > 0) this.#queuedByModel.set(model, queued);
    else this.#queuedByModel.delete(model);
  }

  /** Requests waiting in this replica's router queue, per model: what it publishes to the fleet. */
  get queuedByModel(): ReadonlyMap<string, number> {
    return this.#queuedByModel;
  }

  /**
   * The other replicas' in-flight counts per endpoint id, read from the
   * shared state; endpoints it does not name have none open. `undefined`:
   * the shared state no longer knows (degraded, expired), so every endpoint
   * goes back to this replica's own counts. `sharing`: who queues for each
   * model and who holds requests at each engine; an endpoint serving a
   * model another replica queues for is shared evenly (EndpointView.fleetShare).
   */
  fleetInFlight(others: ReadonlyMap<string, number> | undefined, otherReplicas = 0, sharing?: FleetSharing): void {
    if (others === undefined) {
      for (const state of this.#states.values()) state.forgetFleet();
      return;
    }
    let freed = false;
    for (const state of this.#states.values()) {
      const count = others.get(state.id) ?? 0;
      if (count < state.othersInFlight) freed = true;
      state.fleetInFlight(count, otherReplicas, sharing === undefined ? undefined : seatsAt(state, sharing));
    }
    // Under a configured bound (mirroring always) a replica fills room only at its own completions and
    // scrapes: woken at reads, three replicas filled the same room before each other's publish showed
    // it, and 8-slot engines queued 6/7/7 against 5 in `bench cold-start`'s burst.
    if (freed && this.#clock.fleetMirroring === 'burst') this.onRoomOpened?.();
  }

  /**
   * The other live replicas' safe-start records per endpoint id (see
   * router/state/fleet-safe-start.ts); endpoints it does not name are known
   * to no other replica and keep this replica's own.
   */
  fleetSafeStart(records: ReadonlyMap<string, FleetSafeStartRecord>): void {
    this.#fleetRecords = records;
    let raised = false;
    for (const state of this.#states.values()) {
      const record = records.get(state.id);
      if (record === undefined) continue;
      const before = state.concurrencyLimit;
      state.shareSafeStart(record);
      if (before !== undefined && state.concurrencyLimit !== before) raised = true;
    }
    if (raised) this.onRoomOpened?.();
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
    state.markScrapeStart(this.#readClock());
  }

  /**
   * Records a successful scrape of `state`'s engine: gauges summed over the
   * models it serves, KV-cache usage as the highest. Requests sent before the
   * scrape began are now counted by the engine itself.
   */
  recordScrape(state: EndpointState, models: ReadonlyMap<string, ModelGauges>): void {
    state.recordScrape(models, this.#readClock(), this.#queueWaitsElsewhere?.(state.attributes) ?? false);
  }
}

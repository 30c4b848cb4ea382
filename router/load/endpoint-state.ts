/**
 * Live state of one endpoint: what its source says, what the router is doing
 * with it, what its engine last reported, and whether it is ejected.
 *
 * The state owns its bookkeeping. Everything is readable from outside and
 * nothing is writable: every change is a method named after what happened
 * (a request began or settled, a scrape began or arrived, the source
 * re-described the endpoint, it departed), so the counters that must move
 * together (in-flight, sent-since-scrape, the scrape marks, the memo of
 * derived values) can only move together. The load view, which owns the
 * clock and the set, is the one caller of those methods; scheduling,
 * admission, metrics and debug views only read.
 */
import type { Endpoint } from '../../discovery/endpoint.ts';
import { CompletionRate } from './completion-rate.ts';
import { ejectionLength, nextEjection, type EjectionCensus, type EjectionSettings } from './ejection.ts';
import type { ModelGauges } from './exposition-scanner.ts';
import type { ReplicaCountReader } from './replica-count.ts';
import { estimatedWaiting, loadScore, wouldQueue, type LoadInputs } from './load-formulas.ts';
import { hashString } from './hash.ts';
import { SafeStartLimit, type FleetSafeStartRecord, type SafeStartPhase, type SafeStartSettings } from './safe-start.ts';

/** Upstream failure kinds the proxy reports; also the metric label values. */
export const UPSTREAM_FAILURE_KINDS = ['connect', 'reset', 'timeout', 'midstream', 'status_5xx'] as const;
/** One of {@link UPSTREAM_FAILURE_KINDS}. */
export type UpstreamFailureKind = (typeof UPSTREAM_FAILURE_KINDS)[number];

/** The engine's last successful scrape, summed over the models it serves. */
export interface ScrapedLoad {
  readonly waiting: number;
  readonly running: number;
  /** 0-1, or undefined when the engine does not export it. */
  readonly kvCacheUsage: number | undefined;
  /** Per model, as scraped. */
  readonly models: ReadonlyMap<string, ModelGauges>;
  /** Epoch ms of the scrape. */
  readonly at: number;
}

/** View-wide settings the derived values depend on; the load view owns and ticks it. */
export interface LoadClockAndSettings {
  /** Epoch ms, refreshed by the view before each routing decision. */
  readonly now: number;
  /** A scrape older than this is stale (ms). */
  readonly maxScrapeAgeMs: number;
  /** Capacity assumed for load-score normalisation when unknown (sequences). */
  readonly defaultCapacity: number;
  /** The safe start for endpoints of unknown capacity; undefined: none. */
  readonly safeStart?: SafeStartSettings | undefined;
  /** Router replicas sharing the engines (counted or configured; see replica-count.ts); undefined: unknown. */
  readonly replicas?: ReplicaCountReader | undefined;
  /** Outlier ejection tuning. */
  readonly ejection: EjectionSettings;
}

/** What others may read of the safe-start limit (its inputs come only through the state). */
export type SafeStartReadout = Pick<SafeStartLimit, 'value' | 'exact' | 'phase' | 'status' | 'burstBound'>;

/** Weight of the newest outcome in the error-rate moving average. */
const ERROR_RATE_ALPHA = 0.1;
/** Requests sent this shortly before a scrape began are taken as not counted by it (ms). */
const SEND_GUARD_MS = 25;
/** Send times remembered for that guard. */
const RECENT_SENDS = 32;
/**
 * How long (ms) the router takes to refill a batch slot the engine freed:
 * from the answer's last byte reaching it, through dispatching the next
 * queued request, to that request reaching the engine. A queue the engine
 * drains in this time keeps it from idling meanwhile; anything longer only
 * makes requests wait at the engine instead of in the router's queue, where
 * priorities and deadlines apply.
 */
const REFILL_MS = 2;
/** Weight of the newest answer in the service-time average. */
const SERVICE_ALPHA = 0.1;

/** One endpoint's live state (see the header): created, told what happens and dropped by the load view; read by everyone else. */
export class EndpointState {
  #endpoint: Endpoint;
  #origin = '';
  #basePath = '';
  #idHash = 0;
  #present = true;
  #inFlight = 0;
  #scraped: ScrapedLoad | undefined;
  /** Requests ever sent to this endpoint; a request's number is its token. */
  #sentTotal = 0;
  /** Requests numbered below this were sent before the last applied scrape began, so it counted them. */
  #countedBefore = 0;
  /**
   * Requests numbered from `#countedBefore` up to this were sent while the
   * last scrape was out (or just before it): it may have counted them or not.
   * `#ambiguousCounted` of those still open are taken as counted (see {@link recordScrape}).
   */
  #ambiguousBefore = 0;
  #ambiguousCounted = 0;
  /** `#sentTotal` when the scrape in progress began (-1: none), and how many requests numbered from there have finished. */
  #pendingMark = -1;
  #settledSincePendingMark = 0;
  /** When the last few requests were sent (epoch ms), newest last; see {@link markScrapeStart}. */
  readonly #recentSends: number[] = [];
  #sentSinceScrape = 0;
  #doneSinceScrape = 0;
  #learnedCapacity: number | undefined;
  #errorRate = 0;
  #consecutiveFailures = 0;
  #lastFailureAt: number | undefined;
  #lastFailureKind: UpstreamFailureKind | undefined;
  #ejectedUntil = 0;
  #ejections = 0;
  #lastEjectedAt = 0;
  readonly #safeStart: SafeStartLimit | undefined;
  /** Moving average of complete successful answers' durations (ms), from send to last byte. */
  #serviceMs: number | undefined;
  readonly #completions = new CompletionRate();
  /** Epoch ms the endpoint joined the set. */
  readonly firstSeenAt: number;
  readonly #view: LoadClockAndSettings;
  #othersInFlight = 0;
  #othersAtScrape = 0;
  /** The shared state holds the other replicas' counts for this endpoint (they are seen, not mirrored). */
  #fleetHeld = false;
  readonly #scratch: { -readonly [K in keyof LoadInputs]: LoadInputs[K] } = {
    scraped: undefined,
    sentSinceScrape: 0,
    doneSinceScrape: 0,
    inFlight: 0,
    othersInFlight: 0,
    othersAtScrape: 0,
    capacity: undefined,
    unseenReplicas: 0,
  };

  /** `view` is the load view's clock and settings, read (never written) for every derived value. */
  constructor(endpoint: Endpoint, view: LoadClockAndSettings) {
    this.#view = view;
    this.#safeStart = view.safeStart?.enabled === true ? new SafeStartLimit(view.safeStart) : undefined;
    this.firstSeenAt = view.now;
    this.#endpoint = endpoint;
    this.#adoptUrl(endpoint.url);
    this.#idHash = hashString(endpoint.id);
  }

  /** The endpoint as its source last described it. */
  get endpoint(): Endpoint {
    return this.#endpoint;
  }

  get id(): string {
    return this.#endpoint.id;
  }

  /** `scheme://host:port` of the endpoint, for the HTTP client. */
  get origin(): string {
    return this.#origin;
  }

  /** Path prefix of the endpoint's base URL ('' for none), prepended to request paths. */
  get basePath(): string {
    return this.#basePath;
  }

  /** 32-bit hash of the id, for rendezvous hashing. */
  get idHash(): number {
    return this.#idHash;
  }

  /** False once the endpoint has left the endpoint set; never true again (a return gets a new state). */
  get present(): boolean {
    return this.#present;
  }

  /** The source described the endpoint again (it stays in the set). */
  describe(endpoint: Endpoint): void {
    if (this.#endpoint.url !== endpoint.url) this.#adoptUrl(endpoint.url);
    if (this.#endpoint.id !== endpoint.id) this.#idHash = hashString(endpoint.id);
    this.#endpoint = endpoint;
    this.#version++;
  }

  /** The endpoint left the set. Requests still open to it settle here; nothing routes to it again. */
  depart(): void {
    this.#present = false;
  }

  #adoptUrl(href: string): void {
    const url = new URL(href);
    this.#origin = url.origin;
    this.#basePath = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  }

  /**
   * Ready, not draining, present, and serves at least one known model (an
   * endpoint whose every claimed model its source's allow-list refused is
   * left with none).
   */
  get routable(): boolean {
    const e = this.#endpoint;
    return this.#present && e.ready && !e.draining && e.models !== undefined && e.models.length > 0;
  }

  /** Requests the router has open to this endpoint right now (≥ 0). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests the other router replicas have open to this endpoint, as last read from the shared state (0 without it). */
  get othersInFlight(): number {
    return this.#othersInFlight;
  }

  /**
   * The shared state says the other replicas have `count` requests open to
   * this endpoint (0 when it no longer knows: Redis degraded, the counts
   * expired).
   */
  fleetInFlight(count: number): void {
    if (!this.#fleetHeld) {
      this.#fleetHeld = true;
      this.#version++;
    }
    if (count === this.#othersInFlight) return;
    this.#othersInFlight = count;
    this.#version++;
  }

  /** The shared counts are gone (Redis degraded): the scrape's share of them is forgotten too. */
  forgetFleet(): void {
    this.#fleetHeld = false;
    this.#othersInFlight = 0;
    this.#othersAtScrape = 0;
    this.#version++;
  }

  /** Requests sent since the last scrape that are still open. */
  get sentSinceScrape(): number {
    return this.#sentSinceScrape;
  }

  /** Requests open at the last scrape that have finished since. */
  get doneSinceScrape(): number {
    return this.#doneSinceScrape;
  }

  /**
   * A request was sent at the view's clock. Returns its token for
   * {@link firstByte} and {@link settle}; pair every begin with exactly one settle.
   */
  begin(): number {
    this.#inFlight++;
    this.#sentSinceScrape++;
    const sends = this.#recentSends;
    if (sends.length === RECENT_SENDS) sends.shift();
    sends.push(this.#view.now);
    this.#version++;
    this.#safeStart?.sent(this.#inFlight);
    return this.#sentTotal++;
  }

  /** The first response byte of stream `token` arrived `ttfbMs` after it was sent: how fast the engine starts new work. */
  firstByte(token: number, ttfbMs: number): void {
    this.#safeStart?.firstByte(token, ttfbMs, this.#inFlight);
  }

  /**
   * Request `token` ended at `now` (epoch ms); `failure` is set when the
   * engine failed it (never for a client that went away or a request the
   * router refused). `census` is the set, asked how many endpoints are
   * ejected only when this failure could eject one more. Returns true when
   * the failure ejected the endpoint. The caller has ticked the view's clock
   * when the endpoint has a safe start (it reads {@link unscraped}).
   * `serviceMs` is how long a complete successful answer took, send to last
   * byte (undefined for failed and abandoned ones).
   */
  settle(token: number, now: number, failure: UpstreamFailureKind | undefined, census: EjectionCensus, serviceMs?: number): boolean {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (this.#countedByScrape(token)) this.#doneSinceScrape++;
    else this.#sentSinceScrape = Math.max(0, this.#sentSinceScrape - 1);
    if (this.#pendingMark >= 0 && token >= this.#pendingMark) this.#settledSincePendingMark++;
    this.#version++;
    this.#completions.record(now);
    if (serviceMs !== undefined) this.#serviceMs = this.#serviceMs === undefined ? serviceMs : this.#serviceMs + SERVICE_ALPHA * (serviceMs - this.#serviceMs);
    this.#errorRate += ERROR_RATE_ALPHA * ((failure === undefined ? 0 : 1) - this.#errorRate);
    this.#safeStart?.completed(this.#inFlight, failure === undefined, this.unscraped);
    if (failure === undefined) {
      // One success readmits fully: an endpoint back from ejection on probation is off it.
      this.#consecutiveFailures = 0;
      return false;
    }
    return this.#recordFailure(failure, now, census);
  }

  /**
   * Whether the last scrape counted request `token`, which just ended: sent
   * before it began, or one of the ambiguous requests the scrape was taken to
   * count (which of them does not matter, only how many).
   */
  #countedByScrape(token: number): boolean {
    if (token < this.#countedBefore) return true;
    if (token >= this.#ambiguousBefore || this.#ambiguousCounted === 0) return false;
    this.#ambiguousCounted--;
    return true;
  }

  /** Moving average of upstream failures per request, 0-1. */
  get errorRate(): number {
    return this.#errorRate;
  }

  /** Failures since the last success. */
  get consecutiveFailures(): number {
    return this.#consecutiveFailures;
  }

  /** Epoch ms of the last failure, if any. */
  get lastFailureAt(): number | undefined {
    return this.#lastFailureAt;
  }

  get lastFailureKind(): UpstreamFailureKind | undefined {
    return this.#lastFailureKind;
  }

  /** Ejected from routing until this epoch ms (0: never ejected). */
  get ejectedUntil(): number {
    return this.#ejectedUntil;
  }

  /** Ejections so far; the next lasts longer. Reset after a long healthy spell. */
  get ejections(): number {
    return this.#ejections;
  }

  /** Epoch ms the last ejection began (0: never ejected). */
  get lastEjectedAt(): number {
    return this.#lastEjectedAt;
  }

  /** True while ejected after repeated failures, at the view's clock. */
  get ejected(): boolean {
    return this.#ejectedUntil > this.#view.now;
  }

  #recordFailure(kind: UpstreamFailureKind, now: number, census: EjectionCensus): boolean {
    this.#consecutiveFailures++;
    this.#lastFailureAt = now;
    this.#lastFailureKind = kind;
    const settings = this.#view.ejection;
    const ordinal = nextEjection(this, kind, now, settings, census);
    if (ordinal === 0) return false;
    this.#ejections = ordinal;
    this.#lastEjectedAt = now;
    this.#ejectedUntil = now + ejectionLength(ordinal, settings);
    // Back in after the interval on probation: the next failure ejects again, a success clears it.
    this.#consecutiveFailures = settings.consecutiveFailures - 1;
    return true;
  }

  /** Last successful scrape, if any (kept while stale, for display). */
  get scraped(): ScrapedLoad | undefined {
    return this.#scraped;
  }

  /** Highest `running` seen while the engine had a queue: it was full then. */
  get learnedCapacity(): number | undefined {
    return this.#learnedCapacity;
  }

  /** A scrape began after the last one recorded (and may still be out, or have failed). */
  get awaitingScrape(): boolean {
    return this.#pendingMark >= 0;
  }

  /**
   * A scrape of the engine is about to be sent at `now` (epoch ms). Requests
   * sent from now on may or may not reach the engine before it answers: the
   * scrape's own numbers will say how many it counted (see {@link recordScrape}).
   */
  markScrapeStart(now: number): void {
    // A request sent just before the scrape may still be on its way to the engine when the
    // engine answers the scrape (they travel on different connections): it is ambiguous too.
    const sends = this.#recentSends;
    let recent = 0;
    for (let i = sends.length - 1; i >= 0 && now - (sends[i] as number) <= SEND_GUARD_MS; i--) recent++;
    this.#pendingMark = this.#sentTotal - recent;
    this.#settledSincePendingMark = 0;
  }

  /**
   * A scrape of the engine succeeded at `now` (epoch ms): gauges summed over
   * the models it serves, KV-cache usage as the highest. Requests sent before
   * the scrape began are now counted by the engine itself.
   */
  recordScrape(models: ReadonlyMap<string, ModelGauges>, now: number): void {
    let waiting = 0;
    let running = 0;
    let kv: number | undefined;
    for (const gauges of models.values()) {
      waiting += gauges.waiting;
      running += gauges.running;
      if (gauges.kvCacheUsage !== undefined) kv = Math.max(kv ?? 0, gauges.kvCacheUsage);
    }
    this.#scraped = { waiting, running, kvCacheUsage: kv, models, at: now };
    const mark = this.#pendingMark >= 0 ? this.#pendingMark : this.#sentTotal;
    // Open requests sent before the scrape's guard surely are in its numbers; those sent since may
    // or may not be. The engine's count of this replica's work says how many of them it holds, so
    // right after a scrape the estimate is the router's own open count, not that plus the ambiguous
    // ones again, which would over-count until the next scrape once they finish. Unless the engine
    // holds more than this replica has open: then others may send to it unseen (replicas without
    // shared state, other clients), the count cannot say whose the ambiguous requests are, and they
    // stay uncounted (the safe error). Requests that finished while the scrape was out do not
    // excuse the excess: a slow scrape in a burst sees many of them, and others' work beside.
    const ambiguous = Math.min(this.#inFlight, Math.max(0, this.#sentTotal - mark - this.#settledSincePendingMark));
    const surelyCounted = this.#inFlight - ambiguous;
    const ours = waiting + running - this.#othersInFlight;
    this.#ambiguousCounted = ours > this.#inFlight ? 0 : Math.min(ambiguous, Math.max(0, ours - surelyCounted));
    this.#countedBefore = mark;
    this.#ambiguousBefore = this.#sentTotal;
    this.#sentSinceScrape = ambiguous - this.#ambiguousCounted;
    this.#doneSinceScrape = 0;
    this.#othersAtScrape = this.#othersInFlight;
    this.#pendingMark = -1;
    this.#version++;
    // A queue means the engine was full: what was running then is its capacity.
    if (waiting > 0 && running > (this.#learnedCapacity ?? 0)) this.#learnedCapacity = running;
    // What the scrape surely counted of ours: open requests sent before it began. Not the ambiguous
    // ones the engine's count was taken to include: with others sending unseen that split can be
    // wrong, and the limit grows from this share (three cold replicas overfilled 8-slot engines'
    // queues to 6-9 of a budget of 5 in `bench cold-start` when it included them).
    this.#safeStart?.scraped(waiting, running, surelyCounted, this.#learnedCapacity, this.#inFlight, this.#sentTotal);
  }

  /** The last scrape is missing or older than the max age: routing uses in-flight counts. */
  get stale(): boolean {
    return this.#scraped === undefined || this.#view.now - this.#scraped.at > this.#view.maxScrapeAgeMs;
  }

  /**
   * Not one successful scrape in longer than a scrape stays fresh since the
   * endpoint joined: its metrics cannot be read (not vLLM's, or blocked).
   * Scrapes that worked and then failed do not count: the load they showed
   * still holds what was learned.
   */
  get unscraped(): boolean {
    return this.#scraped === undefined && this.#view.now - this.firstSeenAt > this.#view.maxScrapeAgeMs;
  }

  /**
   * Milliseconds since the last successful scrape, or since the endpoint
   * joined while none has succeeded yet (so an engine that was never
   * scraped ages too), at the view's clock. Exported as a metric: alerts
   * read it, routing reads {@link stale}.
   */
  get scrapeAgeMs(): number {
    return Math.max(0, this.#view.now - (this.#scraped?.at ?? this.firstSeenAt));
  }

  /** Max concurrent sequences: from the source, else learned at saturation, else unknown. */
  get capacity(): number | undefined {
    return this.#endpoint.capacity ?? this.#learnedCapacity;
  }

  /** The safe-start limit (see safe-start.ts), if enabled; in force only while no capacity is configured. */
  get safeStart(): SafeStartReadout | undefined {
    return this.#safeStart;
  }

  /**
   * Requests this replica may have open to the endpoint before it counts as
   * saturated: the safe-start limit while no capacity is configured (the
   * configured capacity wins), else undefined (no limit).
   */
  get concurrencyLimit(): number | undefined {
    return this.#endpoint.capacity === undefined ? this.#safeStart?.value : undefined;
  }

  /** Where the safe-start limit is while it is in force (no configured capacity); undefined otherwise. */
  get safeStartPhase(): SafeStartPhase | undefined {
    return this.#endpoint.capacity === undefined ? this.#safeStart?.phase : undefined;
  }

  /** What this replica shares of the endpoint's safe start with the fleet; undefined when no limit applies (capacity configured, safe start off). */
  get safeStartRecord(): { readonly limit: number; readonly learnedCapacity: number | undefined } | undefined {
    if (this.#safeStart === undefined || this.#endpoint.capacity !== undefined) return undefined;
    return { limit: this.#safeStart.exact, learnedCapacity: this.#learnedCapacity };
  }

  /** The other live replicas' safe start for this endpoint (see router/state/fleet-safe-start.ts): adopt their capacity, share their limit. */
  shareSafeStart(record: FleetSafeStartRecord): void {
    if (this.#safeStart === undefined || this.#endpoint.capacity !== undefined) return;
    if (record.learnedCapacity !== undefined && record.learnedCapacity > (this.#learnedCapacity ?? 0)) {
      this.#learnedCapacity = record.learnedCapacity;
      this.#safeStart.capacityLearnedByFleet();
      this.#version++;
    }
    this.#safeStart.shareWithFleet(record.limits, record.replicas);
  }

  /**
   * Requests this replica may have open to the endpoint for work that
   * belongs there, above the safe-start limit (see SafeStartLimit.burstBound);
   * undefined when capacity is configured or the safe start is off or has
   * handed over.
   */
  get burstBound(): number | undefined {
    return this.#endpoint.capacity === undefined ? this.#safeStart?.burstBound : undefined;
  }

  /**
   * Requests the engine may keep waiting in its own queue, when no fixed
   * `admission.maxWaiting` is set: what it drains (capacity over the mean
   * answer time) while the router refills a freed slot, so a queued request
   * waits there about that long whatever the engine's size. 0 until capacity
   * (configured or learned) and answer time are known, and 0 for any engine
   * that drains less than one request per refill (every chat engine but the
   * fastest): the router's own queue holds the rest.
   */
  get queueAllowance(): number {
    const capacity = this.capacity;
    if (capacity === undefined || this.#serviceMs === undefined || this.#serviceMs <= 0) return 0;
    return Math.floor((capacity / this.#serviceMs) * REFILL_MS);
  }

  /**
   * Requests of this replica's per second the engine finishes, as best known:
   * what it finished lately, or the requests open to it over the mean answer
   * time (Little's law) when that is more. The first lags an engine that is
   * filling up (after a start, a quiet spell, or while the safe start grows);
   * the second follows it at once, counts only this replica's share of an
   * engine others also use, and takes the engine's own queue in its stride
   * (queued requests are open, and their answers take longer).
   */
  drainRate(now: number): number {
    const recent = this.#completions.at(now);
    if (this.#serviceMs === undefined || this.#serviceMs <= 0) return recent;
    return Math.max(recent, (this.#inFlight * 1000) / this.#serviceMs);
  }

  /** Mean time (ms) of complete successful answers, send to last byte, once one was seen. */
  get serviceMs(): number | undefined {
    return this.#serviceMs;
  }

  /** See {@link estimatedWaiting}. */
  get estimatedWaiting(): number {
    return this.#derived().estimatedWaiting;
  }

  /** See {@link wouldQueue}. */
  get wouldQueue(): boolean {
    return this.#derived().wouldQueue;
  }

  /** See {@link loadScore}. */
  get loadScore(): number {
    return this.#derived().loadScore;
  }

  /** KV-cache usage 0-1 from a fresh scrape; 0 when unknown or stale. */
  get kvCacheUsage(): number {
    return this.stale ? 0 : (this.#scraped?.kvCacheUsage ?? 0);
  }

  /** Bumped by every change to the counts, the scrape or the description, so derived values are recomputed. */
  #version = 0;
  #memoVersion = -1;
  #memoNow = Number.NaN;
  readonly #memo = { estimatedWaiting: 0, wouldQueue: false, loadScore: 0 };

  /**
   * The derived load values, computed once per clock tick and change: a
   * routing decision reads them for every candidate, several times.
   */
  #derived(): { estimatedWaiting: number; wouldQueue: boolean; loadScore: number } {
    const memo = this.#memo;
    if (this.#memoVersion === this.#version && this.#memoNow === this.#view.now) return memo;
    const inputs = this.#scratch;
    inputs.scraped = this.stale ? undefined : this.#scraped;
    inputs.sentSinceScrape = this.#sentSinceScrape;
    inputs.doneSinceScrape = this.#doneSinceScrape;
    inputs.inFlight = this.#inFlight;
    inputs.othersInFlight = this.#othersInFlight;
    inputs.othersAtScrape = this.#othersAtScrape;
    inputs.capacity = this.capacity;
    inputs.unseenReplicas = this.#fleetHeld ? 0 : Math.max(0, (this.#view.replicas?.value ?? 1) - 1);
    memo.estimatedWaiting = estimatedWaiting(inputs);
    memo.wouldQueue = wouldQueue(inputs);
    memo.loadScore = loadScore(inputs, this.#view.defaultCapacity);
    this.#memoVersion = this.#version;
    this.#memoNow = this.#view.now;
    return memo;
  }
}

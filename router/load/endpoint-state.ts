/**
 * Live state of one endpoint: what its source says, what the router is doing
 * with it, what its engine last reported, and whether it is ejected. Only the
 * load view mutates it; policies and admission read it.
 */
import type { Endpoint } from '../../discovery/endpoint.ts';
import type { ModelGauges } from './exposition-scanner.ts';
import { estimatedWaiting, loadScore, wouldQueue, type LoadInputs } from './load-formulas.ts';
import { hashString } from './hash.ts';
import { SafeStartLimit, type SafeStartSettings } from './safe-start.ts';

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

/** View-wide settings the derived values depend on. */
export interface LoadClockAndSettings {
  /** Epoch ms, refreshed by the view before each routing decision. */
  readonly now: number;
  /** A scrape older than this is stale (ms). */
  readonly maxScrapeAgeMs: number;
  /** Capacity assumed for load-score normalisation when unknown (sequences). */
  readonly defaultCapacity: number;
  /** The safe start for endpoints of unknown capacity; undefined: none. */
  readonly safeStart?: SafeStartSettings | undefined;
}

/** Weight of the newest outcome in the error-rate moving average. */
const ERROR_RATE_ALPHA = 0.1;
/** Completion-rate window (ms) and the weight of the newest window. */
const RATE_WINDOW_MS = 1_000;
const RATE_ALPHA = 0.5;

export class EndpointState {
  /** The endpoint as its source last described it. */
  endpoint!: Endpoint;
  /** `scheme://host:port` of the endpoint, for the HTTP client. */
  origin = '';
  /** Path prefix of the endpoint's base URL ('' for none), prepended to request paths. */
  basePath = '';
  /** 32-bit hash of the id, for rendezvous hashing. */
  idHash = 0;
  /** False once the endpoint has left the endpoint set. */
  present = true;
  /** Requests the router has open to this endpoint right now. */
  inFlight = 0;
  /** Last successful scrape, if any (kept while stale, for display). */
  scraped: ScrapedLoad | undefined;
  /** Requests ever sent to this endpoint; a request's number is its token. */
  sentTotal = 0;
  /** Requests numbered below this were sent before the last applied scrape began, so it counted them. */
  countedBefore = 0;
  /** `sentTotal` when the scrape in progress began (-1: none), and how many requests numbered from there have finished. */
  pendingMark = -1;
  settledSincePendingMark = 0;
  /** When the last few requests were sent (epoch ms), newest last; see LoadView.markScrapeStart. */
  readonly recentSends: number[] = [];
  /** Requests sent since the last scrape that are still open. */
  sentSinceScrape = 0;
  /** Requests open at the last scrape that have finished since. */
  doneSinceScrape = 0;
  /** Highest `running` seen while the engine had a queue: it was full then. */
  learnedCapacity: number | undefined;
  /** Moving average of upstream failures per request, 0-1. */
  errorRate = 0;
  /** Failures since the last success. */
  consecutiveFailures = 0;
  lastFailureAt: number | undefined;
  lastFailureKind: UpstreamFailureKind | undefined;
  /** Ejected from routing until this epoch ms (0: not ejected). */
  ejectedUntil = 0;
  /** Ejections so far; the next ejection lasts longer. Reset after a long healthy spell. */
  ejections = 0;
  lastEjectedAt = 0;
  /** The safe-start limit (see safe-start.ts); in force only while no capacity is configured. */
  readonly safeStart: SafeStartLimit | undefined;
  /** Epoch ms the endpoint joined the set. */
  readonly firstSeenAt: number;
  readonly #view: LoadClockAndSettings;
  readonly #scratch: { -readonly [K in keyof LoadInputs]: LoadInputs[K] } = { scraped: undefined, sentSinceScrape: 0, doneSinceScrape: 0, inFlight: 0, capacity: undefined };

  constructor(endpoint: Endpoint, view: LoadClockAndSettings) {
    this.#view = view;
    this.safeStart = view.safeStart?.enabled === true ? new SafeStartLimit(view.safeStart) : undefined;
    this.firstSeenAt = view.now;
    this.describe(endpoint);
  }

  /** Adopts the source's latest description of the endpoint. */
  describe(endpoint: Endpoint): void {
    if (this.endpoint?.url !== endpoint.url) {
      const url = new URL(endpoint.url);
      this.origin = url.origin;
      this.basePath = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
    }
    if (this.endpoint?.id !== endpoint.id) this.idHash = hashString(endpoint.id);
    this.endpoint = endpoint;
    this.#version++;
  }

  get id(): string {
    return this.endpoint.id;
  }

  /**
   * Ready, not draining, present, and serves at least one known model (an
   * endpoint whose every claimed model its source's allow-list refused is
   * left with none).
   */
  get routable(): boolean {
    const e = this.endpoint;
    return this.present && e.ready && !e.draining && e.models !== undefined && e.models.length > 0;
  }

  /** True while ejected after repeated failures. */
  get ejected(): boolean {
    return this.ejectedUntil > this.#view.now;
  }

  /** The last scrape is missing or older than the max age: routing uses in-flight counts. */
  get stale(): boolean {
    return this.scraped === undefined || this.#view.now - this.scraped.at > this.#view.maxScrapeAgeMs;
  }

  /** Max concurrent sequences: from the source, else learned at saturation, else unknown. */
  get capacity(): number | undefined {
    return this.endpoint.capacity ?? this.learnedCapacity;
  }

  /**
   * Requests this replica may have open to the endpoint before it counts as
   * saturated: the safe-start limit while no capacity is configured (the
   * configured capacity wins), else undefined (no limit).
   */
  get concurrencyLimit(): number | undefined {
    return this.endpoint.capacity === undefined ? this.safeStart?.value : undefined;
  }

  /**
   * Not one successful scrape in longer than a scrape stays fresh since the
   * endpoint joined: its metrics cannot be read (not vLLM's, or blocked).
   * Scrapes that worked and then failed do not count: the load they showed
   * still holds what was learned.
   */
  get unscraped(): boolean {
    return this.scraped === undefined && this.#view.now - this.firstSeenAt > this.#view.maxScrapeAgeMs;
  }

  /**
   * Milliseconds since the last successful scrape, or since the endpoint
   * joined while none has succeeded yet (so an engine that was never
   * scraped ages too), at the view's clock. Exported as a metric: alerts
   * read it, routing reads {@link stale}.
   */
  get scrapeAgeMs(): number {
    return Math.max(0, this.#view.now - (this.scraped?.at ?? this.firstSeenAt));
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
    return this.stale ? 0 : (this.scraped?.kvCacheUsage ?? 0);
  }

  /**
   * The load view calls this after every change to the counts or the
   * scrape, so derived values are recomputed.
   */
  touch(): void {
    this.#version++;
  }

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
    inputs.scraped = this.stale ? undefined : this.scraped;
    inputs.sentSinceScrape = this.sentSinceScrape;
    inputs.doneSinceScrape = this.doneSinceScrape;
    inputs.inFlight = this.inFlight;
    inputs.capacity = this.capacity;
    memo.estimatedWaiting = estimatedWaiting(inputs);
    memo.wouldQueue = wouldQueue(inputs);
    memo.loadScore = loadScore(inputs, this.#view.defaultCapacity);
    this.#memoVersion = this.#version;
    this.#memoNow = this.#view.now;
    return memo;
  }

  /**
   * Requests finished per second, smoothed over one-second windows: how fast
   * the engine drains, which sets the Retry-After of a shed request.
   */
  completionRate(now: number): number {
    this.#rollRateWindow(now);
    return this.#completionRate;
  }

  /** Counts one finished request at `now` (epoch ms). */
  recordCompletion(now: number): void {
    this.#rollRateWindow(now);
    this.#windowCount++;
  }

  #completionRate = 0;
  #windowStart = 0;
  #windowCount = 0;

  #rollRateWindow(now: number): void {
    const elapsed = now - this.#windowStart;
    if (elapsed < RATE_WINDOW_MS) return;
    // Fold the finished window in, then decay for any empty windows after it.
    const windows = Math.floor(elapsed / RATE_WINDOW_MS);
    const rate = (this.#windowCount * 1000) / RATE_WINDOW_MS;
    this.#completionRate = this.#windowStart === 0 ? rate : this.#completionRate + RATE_ALPHA * (rate - this.#completionRate);
    this.#completionRate *= (1 - RATE_ALPHA) ** (windows - 1);
    this.#windowStart = now;
    this.#windowCount = 0;
  }

  /** Folds one request outcome into the error rate. */
  recordOutcome(failed: boolean): void {
    this.errorRate += ERROR_RATE_ALPHA * ((failed ? 1 : 0) - this.errorRate);
  }
}

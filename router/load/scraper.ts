/**
 * Scrapes every endpoint's `/metrics` on an interval, all endpoints
 * concurrently up to a cap, each with its own timeout and size cap, and
 * hands the parsed gauges to the load view. A slow or hung engine never
 * delays the others or any request: scrapes run off the request path, and an
 * endpoint whose previous scrape is still running is skipped this round.
 * A failed scrape keeps the last good value until it goes stale.
 *
 * An endpoint whose safe-start limit just held the router back is scraped
 * soon besides the regular rounds ({@link Scraper.scrapeSoon}), at most once
 * per evidence interval: the limit grows only on scrapes, so on a fresh
 * router they pace how soon a fast fleet is used whole (a burst of a few
 * seconds otherwise ran at the first limit). Once the limit no longer binds
 * or the engine's capacity is learned, only the regular rounds remain.
 *
 * Each endpoint's metrics are read in its dialect (the endpoint's own, from a
 * pod annotation or per-URL config, else the router's default): a named one
 * reads only its names, `auto` detects them from each body, and `none` is
 * never scraped, so an engine known to export nothing costs no request and
 * no log line (the load view then runs it on in-flight counts against the
 * safe start's limit).
 *
 * Metric extractors (metric-extractor.ts) ride on the same scrape: the
 * scraper compiles their series into its scanner once, hands each its samples
 * and, when the scrape succeeded, lets each commit into the endpoint's
 * attributes. A failed scrape commits nothing, so their attributes keep the
 * last good value and go stale with the load gauges.
 */
import type { EngineDialect, MetricsDialect } from '../../discovery/endpoint.ts';
import type { EndpointState } from './endpoint-state.ts';
import { ExpositionScanner, type ModelGauges } from './exposition-scanner.ts';
import type { MetricExtraction, MetricExtractor } from './metric-extractor.ts';

/**
 * Fetches an endpoint's metrics text. `source` is the endpoint's discovery
 * source (it chooses the engine key sent). Rejects on any failure.
 */
export type MetricsFetcher = (baseUrl: string, source: string | undefined) => Promise<string>;

/** What the scraper needs from the load view. */
export interface ScrapedView {
  all(): Iterable<EndpointState>;
  markScrapeStart(state: EndpointState): void;
  recordScrape(state: EndpointState, models: ReadonlyMap<string, ModelGauges>): void;
}

/** Hears about every scrape (metrics) and about failure streaks starting and ending (logs). */
export interface ScrapeObserver {
  scraped(state: EndpointState, seconds: number, error: string | undefined): void;
  failing(state: EndpointState, error: string): void;
  recovered(state: EndpointState, failedForMs: number): void;
}

/** Scraper timing and limits. */
export interface ScraperSettings {
  readonly intervalMs: number;
  readonly concurrency: number;
  /** Dialect of endpoints that do not name their own. */
  readonly dialect: MetricsDialect;
  /**
   * Least time between the starts of two scrapes of an endpoint when its
   * safe-start limit asks for one ({@link Scraper.scrapeSoon};
   * `load.safeStart.scrapeIntervalMs`); undefined: only the regular rounds.
   */
  readonly evidenceIntervalMs?: number | undefined;
}

/** How an endpoint's metrics are read: the dialect in force and, once a scrape succeeded, the one its body spoke. */
export interface DialectStatus {
  readonly configured: MetricsDialect;
  readonly detected: EngineDialect | undefined;
}

const NO_EXTRACTIONS: readonly MetricExtraction[] = [];

interface Health {
  /** When its last scrape started (performance.now() ms). */
  lastStartedAt: number | undefined;
  failingSince: number | undefined;
  lastError: string | undefined;
  detected: EngineDialect | undefined;
}

/** The scrape loop. */
export class Scraper {
  readonly #view: ScrapedView;
  readonly #fetch: MetricsFetcher;
  readonly #settings: ScraperSettings;
  readonly #observer: ScrapeObserver;
  readonly #extractors: readonly MetricExtractor[];
  readonly #scanner: ExpositionScanner;
  readonly #running = new Set<EndpointState>();
  readonly #health = new WeakMap<EndpointState, Health>();
  readonly #queue: EndpointState[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** Scrapes {@link scrapeSoon} scheduled and not yet queued. */
  readonly #soon = new Map<EndpointState, NodeJS.Timeout>();
  #stopped = false;

  /** @param extractors read from every scrape besides the load gauges; their series names are compiled here, once. */
  constructor(view: ScrapedView, fetch: MetricsFetcher, settings: ScraperSettings, observer: ScrapeObserver, extractors: readonly MetricExtractor[] = []) {
    this.#view = view;
    this.#fetch = fetch;
    this.#settings = settings;
    this.#observer = observer;
    this.#extractors = extractors;
    this.#scanner = new ExpositionScanner(extractors);
  }

  /** Starts scraping now and then every interval. */
  start(): void {
    this.tick();
    this.#timer = setInterval(() => this.tick(), this.#settings.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    for (const timer of this.#soon.values()) clearTimeout(timer);
    this.#soon.clear();
    this.#queue.length = 0;
  }

  /**
   * Scrapes `state` as soon as its last scrape started an evidence interval
   * ago: its safe-start limit just held the router back, and the next scrape
   * is the evidence the limit grows (or cuts) on. Nothing when no evidence
   * interval is set, or a scrape of it is already queued, running or
   * scheduled.
   */
  scrapeSoon(state: EndpointState): void {
    const gapMs = this.#settings.evidenceIntervalMs;
    if (gapMs === undefined || this.#stopped || this.#soon.has(state) || this.#pending(state) || this.#dialectOf(state) === 'none') return;
    const waitMs = (this.#health.get(state)?.lastStartedAt ?? Number.NEGATIVE_INFINITY) + gapMs - performance.now();
    if (waitMs <= 0) return this.#enqueue(state);
    const timer = setTimeout(() => {
      this.#soon.delete(state);
      if (!this.#pending(state)) this.#enqueue(state);
    }, waitMs);
    timer.unref();
    this.#soon.set(state, timer);
  }

  /** The last scrape error of an endpoint while its scrapes are failing. */
  failure(state: EndpointState): { since: number; error: string } | undefined {
    const health = this.#health.get(state);
    return health?.failingSince === undefined ? undefined : { since: health.failingSince, error: health.lastError ?? '' };
  }

  /** The dialect an endpoint's metrics are read in, and the one last detected. */
  dialect(state: EndpointState): DialectStatus {
    return { configured: this.#dialectOf(state), detected: this.#health.get(state)?.detected };
  }

  #dialectOf(state: EndpointState): MetricsDialect {
    return state.endpoint.metricsDialect ?? this.#settings.dialect;
  }

  /** One round: queue every endpoint that is not being scraped already (nor exempt from scraping). */
  tick(): void {
    for (const state of this.#view.all()) {
      if (this.#dialectOf(state) === 'none') continue;
      if (!this.#pending(state)) this.#queue.push(state);
    }
    this.#drain();
  }

  #pending(state: EndpointState): boolean {
    return this.#running.has(state) || this.#queue.includes(state);
  }

  #enqueue(state: EndpointState): void {
    this.#queue.push(state);
    this.#drain();
  }

  #drain(): void {
    while (this.#running.size < this.#settings.concurrency && this.#queue.length > 0) {
      const state = this.#queue.shift() as EndpointState;
      if (!state.present) continue;
      this.#running.add(state);
      void this.#scrape(state).finally(() => {
        this.#running.delete(state);
        this.#drain();
      });
    }
  }

  async #scrape(state: EndpointState): Promise<void> {
    const started = performance.now();
    let error: string | undefined;
    const dialect = this.#dialectOf(state);
    this.#healthOf(state).lastStartedAt = started;
    this.#view.markScrapeStart(state);
    try {
      const body = await this.#fetch(state.endpoint.url, state.endpoint.source);
      const extractions: readonly MetricExtraction[] = this.#extractors.length === 0 ? NO_EXTRACTIONS : this.#extractors.map((extractor) => extractor.begin());
      const result = this.#scanner.scan(body, dialect === 'none' ? 'auto' : dialect, extractions);
      if (result.ok) {
        // Plugin data first: the load view reads it to judge the scrape's queue (LoadSettings.queueWaitsElsewhere).
        for (const extraction of extractions) extraction.commit(state.attributes);
        this.#view.recordScrape(state, result.models);
        this.#healthOf(state).detected = result.dialect;
      } else error = `unusable metrics: ${result.error}`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    this.#observer.scraped(state, (performance.now() - started) / 1000, error);
    this.#track(state, error);
  }

  #healthOf(state: EndpointState): Health {
    let health = this.#health.get(state);
    if (health === undefined) this.#health.set(state, (health = { lastStartedAt: undefined, failingSince: undefined, lastError: undefined, detected: undefined }));
    return health;
  }

  #track(state: EndpointState, error: string | undefined): void {
    const health = this.#healthOf(state);
    if (error !== undefined) {
      health.lastError = error;
      if (health.failingSince === undefined) {
        health.failingSince = Date.now();
        this.#observer.failing(state, error);
      }
    } else if (health.failingSince !== undefined) {
      this.#observer.recovered(state, Date.now() - health.failingSince);
      health.failingSince = undefined;
      health.lastError = undefined;
    }
  }
}

/**
 * What the router watches of its engines once discovery has found them: the
 * scraper that feeds their /metrics into the load view, and the discovery
 * sources' own status series.
 */
import { registerDiscoveryMetrics } from '../../discovery/kubernetes/discovery-metrics.ts';
import { fetchText } from '../../discovery/upstream-body.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import type { LoadView } from '../load/load-view.ts';
import { loraRequestsInfo } from '../load/extractors/lora-requests-info.ts';
import type { MetricExtractor } from '../load/metric-extractor.ts';
import { Scraper, type ScrapedView } from '../load/scraper.ts';
import type { RouterMetrics } from '../metrics/metrics.ts';
import type { EngineCredentials } from '../proxy/engine-credentials.ts';
import type { Capacity } from './capacity.ts';
import type { Discovery } from './discovery.ts';

/**
 * The engine metrics read besides the load gauges, each into a per-endpoint
 * attribute (router/load/metric-extractor.ts). Register an extractor here
 * together with the plugin that reads its attribute: every one costs each
 * scrape the parsing of its lines: vLLM's LoRA state, for the `lora`
 * affinity walk (router/scheduling/scorers/lora-affinity.ts).
 */
const METRIC_EXTRACTORS: readonly MetricExtractor[] = [loraRequestsInfo];

/** What {@link buildEngineWatch} reads and reports to. */
export interface EngineWatchDeps {
  /** The view the scrapes feed, which asks for a scrape soon when a safe-start limit binds. */
  readonly view: ScrapedView & Pick<LoadView, 'onAwaitsEvidence'>;
  readonly capacity: Capacity;
  readonly discovery: Discovery;
  readonly credentials: EngineCredentials;
  readonly metrics: RouterMetrics;
  readonly logger: Logger;
}

/** The engine watch; the router starts and stops the scraper. */
export interface EngineWatch {
  readonly scraper: Scraper;
}

/**
 * Builds the scraper (each good scrape wakes the wait queue: the engine's
 * room may have grown) and registers the Kubernetes sources' status series.
 */
export function buildEngineWatch(config: Config, deps: EngineWatchDeps): EngineWatch {
  const { capacity, metrics, logger } = deps;
  const kubernetes = deps.discovery.kubernetes;
  if (kubernetes !== undefined) registerDiscoveryMetrics(metrics.registry, () => kubernetes.status());
  const headersFor = scrapeHeaders(deps.credentials);
  const scraper = new Scraper(
    deps.view,
    (baseUrl, source) =>
      fetchText(capacity.probeAgent, new URL(`${baseUrl}/metrics`), { timeoutMs: config.scrape.timeoutMs, maxBytes: config.scrape.maxBytes, headers: headersFor(source) }),
    { ...config.scrape, evidenceIntervalMs: config.load.safeStart.enabled ? config.load.safeStart.scrapeIntervalMs : undefined },
    {
      scraped: (state, seconds, error) => {
        metrics.observeScrape(state, seconds, error !== undefined);
        if (error === undefined) capacity.queue.notify();
      },
      failing: (state, error) => logger.warn({ backend: state.id, error }, 'scraping engine metrics started failing; its load goes stale'),
      recovered: (state, failedForMs) => logger.info({ backend: state.id, failedForMs }, 'scraping engine metrics recovered'),
    },
    METRIC_EXTRACTORS,
  );
  // An endpoint whose safe-start limit binds is scraped soon: that scrape is what the limit grows on.
  deps.view.onAwaitsEvidence = (state) => scraper.scrapeSoon(state);
  return { scraper };
}

/** Scrape request headers per source name, built once per source, not per scrape. */
function scrapeHeaders(credentials: EngineCredentials): (source: string | undefined) => Record<string, string> {
  const bySource = new Map<string | undefined, Record<string, string>>();
  return (source) => {
    let headers = bySource.get(source);
    if (headers === undefined) {
      const authorization = credentials.engineAuthorization(source);
      bySource.set(source, (headers = authorization === undefined ? {} : { authorization }));
    }
    return headers;
  };
}

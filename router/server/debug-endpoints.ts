/**
 * The `/debug/endpoints` document: everything the router believes about each
 * endpoint, so an operator can see why it routes the way it does.
 */
import type { Endpoint } from '../../discovery/endpoint.ts';
import type { ModelProbeStatus } from '../../discovery/model-probe.ts';
import type { EndpointState } from '../load/endpoint-state.ts';
import type { LoadView } from '../load/load-view.ts';
import type { DialectStatus } from '../load/scraper.ts';

/** Extra per-endpoint facts held outside the load view. */
export interface DebugSources {
  /** The model probe's view of the endpoint (by its URL and source). */
  modelProbe(endpoint: Endpoint): ModelProbeStatus | undefined;
  scrapeFailure(state: EndpointState): { since: number; error: string } | undefined;
  /** The metric dialect the endpoint is read in, and the one its last good scrape spoke. */
  scrapeDialect(state: EndpointState): DialectStatus;
  /** State of each Kubernetes discovery source (sync, errors, restarts); empty for static discovery. */
  discovery?(): readonly unknown[];
  /** The router replicas this one takes its share against, where that count comes from, and the watch that counts them. */
  replicas?(): unknown;
  /** The model rewrites and InferenceObjective classes in force, and the watches of their objects. */
  inferenceExtension?(): unknown;
  /** Shared sessions this replica holds, per endpoint id; undefined without Redis (sessions then go by hashing, with no table). */
  sessionsByEndpoint?(): ReadonlyMap<string, number> | undefined;
}

const iso = (ms: number | undefined) => (ms === undefined || ms === 0 ? null : new Date(ms).toISOString());

/** Builds the document (reads the clock once). */
export function debugEndpointsDocument(view: LoadView, routerInFlight: number, sources: DebugSources): unknown {
  view.tick();
  const now = view.clock.now;
  const sessions = sources.sessionsByEndpoint?.();
  return {
    version: view.version,
    synced: view.synced,
    routerInFlight,
    discovery: sources.discovery?.() ?? [],
    replicas: sources.replicas?.() ?? null,
    inferenceExtension: sources.inferenceExtension?.() ?? null,
    endpoints: [...view.all()].map((state) => {
      const scraped = state.scraped;
      const failure = sources.scrapeFailure(state);
      const dialect = sources.scrapeDialect(state);
      return {
        id: state.id,
        url: state.endpoint.url,
        // The source's name only: its engine key and allow-list are never part of this document.
        source: state.endpoint.source ?? null,
        models: state.endpoint.models ?? null,
        ready: state.endpoint.ready,
        draining: state.endpoint.draining,
        routable: state.routable,
        inFlight: state.inFlight,
        // The other replicas' open requests, from the shared state (0 without Redis or while degraded).
        othersInFlight: state.othersInFlight,
        // While another replica queues for the engine: this replica's seat in an even share of it, else null.
        fleetShare: state.fleetShare ?? null,
        // Shared sessions this replica knows to be on the endpoint; null without Redis.
        sessions: sessions === undefined ? null : (sessions.get(state.id) ?? 0),
        load: {
          estimatedWaiting: state.estimatedWaiting,
          loadScore: state.loadScore,
          kvCacheUsage: state.kvCacheUsage,
          capacity: state.capacity ?? null,
          capacitySource: state.endpoint.capacity !== undefined ? 'configured' : state.learnedCapacity !== undefined ? 'learned' : 'unknown',
          sentSinceScrape: state.sentSinceScrape,
          // Waiting the engine may keep when no fixed admission.maxWaiting is set, and what it derives from.
          queueAllowance: state.queueAllowance,
          meanAnswerMs: state.serviceMs === undefined ? null : Math.round(state.serviceMs),
          // The safe-start limit while it is in force (no configured capacity), else null.
          safeStart: state.concurrencyLimit === undefined ? null : (state.safeStart?.status ?? null),
        },
        scrape: {
          // What routing reads: fresh gauges, stale ones (in-flight counts meanwhile), or in-flight
          // counts alone for an engine whose metrics never could be read or are not scraped at all.
          metrics: dialect.configured === 'none' ? 'not-scraped' : state.unscraped ? 'unavailable' : state.stale ? 'stale' : 'fresh',
          dialect: dialect.configured,
          detectedDialect: dialect.detected ?? null,
          stale: state.stale,
          ageMs: scraped === undefined ? null : now - scraped.at,
          waiting: scraped?.waiting ?? null,
          running: scraped?.running ?? null,
          kvCacheUsage: scraped?.kvCacheUsage ?? null,
          perModel: scraped === undefined ? {} : Object.fromEntries(scraped.models),
          failingSince: iso(failure?.since),
          lastError: failure?.error ?? null,
        },
        health: {
          errorRate: Number(state.errorRate.toFixed(4)),
          consecutiveFailures: state.consecutiveFailures,
          lastFailureKind: state.lastFailureKind ?? null,
          lastFailureAt: iso(state.lastFailureAt),
          ejected: state.ejected,
          ejectedUntil: state.ejected ? iso(state.ejectedUntil) : null,
          ejections: state.ejections,
          modelProbe: sources.modelProbe(state.endpoint) ?? null,
        },
      };
    }),
  };
}

/**
 * The router's metrics: gauges read from the load view and the capacity at
 * scrape time, and the view's departures and ejections counted as they
 * happen.
 */
import type { LoadView } from '../load/load-view.ts';
import type { Logger } from '../log.ts';
import { RouterMetrics } from '../metrics/metrics.ts';
import type { Capacity } from './capacity.ts';

/** What {@link buildMetrics} reads. */
export interface MetricsDeps {
  readonly view: LoadView;
  readonly capacity: Capacity;
  readonly logger: Logger;
}

/** Builds the metrics and hooks the view's departures and ejections to them (and ejections to the log). */
export function buildMetrics(deps: MetricsDeps): RouterMetrics {
  const { view, capacity, logger } = deps;
  const metrics = new RouterMetrics({
    backends: () => {
      view.tick();
      return view.all();
    },
    routerInFlight: () => capacity.openRequests.count,
    connections: () => capacity.connections.count,
    eventLoopLagMs: () => capacity.lag.lagMs,
    queueLength: () => capacity.queue.length,
    bufferedBodyBytes: () => capacity.bodyBudget.usedBytes,
  });
  view.onDeparture = (state) => metrics.forgetBackend(state);
  view.onEjection = (state, until) => {
    metrics.countEjection(state);
    logger.warn({ backend: state.id, until: new Date(until).toISOString(), ejections: state.ejections }, 'endpoint ejected after repeated failures');
  };
  return metrics;
}

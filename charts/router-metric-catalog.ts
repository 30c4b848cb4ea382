/**
 * The series the router exports, as Prometheus stores them: the registry is
 * built in process the way the router builds it (Kubernetes discovery
 * and shared-state metrics included), so a renamed metric fails the dashboard and alert tests
 * instead of leaving an empty panel or a silent alert.
 */
import { registerDiscoveryMetrics } from '../discovery/kubernetes/discovery-metrics.ts';
import { RouterMetrics } from '../router/metrics/metrics.ts';
import { InferenceExtensionMetrics } from '../router/metrics/inference-extension-metrics.ts';
import { SharedStateMetrics } from '../router/metrics/shared-state-metrics.ts';

/** Series name → whether it only grows (a counter, or part of a histogram: read it through a range). */
export type MetricCatalog = Map<string, { readonly cumulative: boolean }>;

/** Every series name the router can export, histograms as their `_bucket`, `_sum` and `_count` series. */
export async function routerMetricCatalog(): Promise<MetricCatalog> {
  const metrics = new RouterMetrics({
    backends: () => [],
    routerInFlight: () => 0,
    connections: () => 0,
    eventLoopLagMs: () => 0,
    queueLength: () => 0,
    bufferedBodyBytes: () => 0,
  });
  registerDiscoveryMetrics(metrics.registry, () => []);
  new InferenceExtensionMetrics(metrics.registry);
  // As a replica with Redis configured registers them (without Redis their gauges have no series).
  new SharedStateMetrics(metrics.registry, { status: () => 'up', fleetReplicas: () => 1, fleetLoadAgeSeconds: () => 0 });
  const catalog: MetricCatalog = new Map();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    // prom-client types `type` as a numeric enum, but it is the exposition's type name.
    const type = String(metric.type);
    if (type === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) catalog.set(`${metric.name}${suffix}`, { cumulative: true });
    } else {
      catalog.set(metric.name, { cumulative: type === 'counter' });
    }
  }
  return catalog;
}

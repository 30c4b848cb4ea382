/**
 * Prometheus metrics of the Kubernetes sources, registered on the router's
 * registry and read from the sources' status at scrape time (so a source
 * that is gone leaves no series). Names follow the router's conventions:
 * prefix `switchyard_`, base units, `_total` on counters; the `source` label
 * takes configured source names only.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { InferencePoolSourceStatus } from './inference-pool-source.ts';
import type { KubernetesSourceStatus } from './kubernetes-source.ts';
import { RESTART_REASONS } from './list-watcher.ts';

/** Registers the discovery metrics; `statuses` is called on every scrape. */
export function registerDiscoveryMetrics(registry: Registry, statuses: () => readonly KubernetesSourceStatus[]): void {
  const registers = [registry];
  new Gauge({
    name: 'switchyard_discovery_up',
    help: '1 while the source is synced and its last list/watch succeeded; 0 while the API fails (the last good endpoint set stays in use).',
    labelNames: ['source', 'kind', 'namespace'],
    registers,
    collect() {
      this.reset();
      for (const s of statuses()) this.set({ source: s.name, kind: s.kind, namespace: s.namespace }, s.healthy ? 1 : 0);
    },
  });
  new Gauge({
    name: 'switchyard_discovery_last_list_timestamp_seconds',
    help: 'Unix time of the last successful full list of the source.',
    labelNames: ['source'],
    registers,
    collect() {
      this.reset();
      for (const s of statuses()) if (s.lastListAt !== undefined) this.set({ source: s.name }, s.lastListAt / 1000);
    },
  });
  new Gauge({
    name: 'switchyard_discovery_endpoints',
    help: 'Endpoints (any state) the source currently reports.',
    labelNames: ['source'],
    registers,
    collect() {
      this.reset();
      for (const s of statuses()) this.set({ source: s.name }, s.endpoints);
    },
  });
  new Gauge({
    name: 'switchyard_discovery_skipped_objects',
    help: 'Objects (pods, EndpointSlices) the source lists that give no endpoint: no pod IP yet, finished, no usable port, not the Service\'s; /debug/endpoints says why.',
    labelNames: ['source'],
    registers,
    collect() {
      this.reset();
      for (const s of statuses()) this.set({ source: s.name }, s.skippedCount);
    },
  });
  const pools = () => statuses().filter((s): s is InferencePoolSourceStatus => 'pool' in s);
  new Gauge({
    name: 'switchyard_inference_pool_ready',
    help: 'Per InferencePool source: 1 while its pool is found at inference.networking.k8s.io/v1 with a usable selector and targetPorts; 0 while it is absent, only at v1alpha2, or of a bad shape (it then gives no endpoints; /debug/endpoints says why).',
    labelNames: ['source', 'pool'],
    registers,
    collect() {
      this.reset();
      for (const s of pools()) this.set({ source: s.name, pool: s.pool.pool }, s.pool.usable ? 1 : 0);
    },
  });
  new Gauge({
    name: 'switchyard_inference_pool_endpoints',
    help: 'Per InferencePool source: endpoints (any state) its pool gives, one per target port of each selected pod.',
    labelNames: ['source', 'pool'],
    registers,
    collect() {
      this.reset();
      for (const s of pools()) this.set({ source: s.name, pool: s.pool.pool }, s.endpoints);
    },
  });
  new Counter({
    name: 'switchyard_discovery_restarts_total',
    help: 'List+watch restarts (each re-lists), by reason: error, gone (410), malformed, idle (silent watch), resync (periodic), closed (server ended the watch).',
    labelNames: ['source', 'reason'],
    registers,
    collect() {
      // The sources count; the counter mirrors their totals at scrape time.
      this.reset();
      for (const s of statuses()) for (const reason of RESTART_REASONS) this.inc({ source: s.name, reason }, s.restarts[reason]);
    },
  });
}

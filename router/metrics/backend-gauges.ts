/**
 * The per-endpoint gauges (one series per endpoint in the set) and the
 * per-model count of endpoints that can take requests. All are read from
 * the load view at scrape time and rebuilt on every scrape, so an endpoint
 * that left the set leaves no series behind.
 */
import { Gauge, type Registry } from 'prom-client';
import type { EndpointAttributes } from '../load/endpoint-attributes.ts';
import type { EndpointView } from '../load/endpoint-view.ts';
import { LORA_REQUESTS_INFO, type LoraRequestsInfo } from '../load/extractors/lora-requests-info.ts';
import { SAFE_START_PHASES, type SafeStartPhase } from '../load/safe-start.ts';

/** One endpoint's live values, read at scrape time (contracts on {@link EndpointView}). */
export interface BackendGauges extends Pick<EndpointView, 'id' | 'inFlight' | 'stale' | 'estimatedWaiting' | 'loadScore' | 'ejected'> {
  readonly scraped: { readonly waiting: number; readonly running: number; readonly kvCacheUsage: number | undefined } | undefined;
  /** Safe-start limit on requests open to it (unknown capacity only); undefined: none. */
  readonly concurrencyLimit?: number | undefined;
  /** Where the safe-start limit is (unknown capacity only); undefined: none. */
  readonly safeStartPhase?: SafeStartPhase | undefined;
  /** Ms since the last successful scrape (since joining while none succeeded); undefined: no series. */
  readonly scrapeAgeMs?: number | undefined;
  /** Ready, not draining, and serving a known model (ejection aside); undefined: no series. */
  readonly routable?: boolean | undefined;
  /** The endpoint as its source describes it: the models it serves (undefined while unknown). */
  readonly endpoint?: { readonly models: readonly string[] | undefined } | undefined;
  /** Plugin data from its scrapes (the LoRA state: lora-metrics.ts). */
  readonly attributes?: EndpointAttributes | undefined;
}

/** A gauge per backend, filled from the current endpoints at scrape time. */
interface BackendGaugeSpec {
  readonly name: string;
  readonly help: string;
  readonly value: (b: BackendGauges) => number | undefined;
}

const BACKEND_GAUGES: readonly BackendGaugeSpec[] = [
  { name: 'switchyard_backend_in_flight_requests', help: 'Requests the router has open to each endpoint.', value: (b) => b.inFlight },
  { name: 'switchyard_backend_engine_waiting_requests', help: "The engine's vllm:num_requests_waiting at the last successful scrape (summed over models and engines).", value: (b) => b.scraped?.waiting },
  { name: 'switchyard_backend_engine_running_requests', help: "The engine's vllm:num_requests_running at the last successful scrape.", value: (b) => b.scraped?.running },
  { name: 'switchyard_backend_kv_cache_usage_ratio', help: "The engine's KV-cache usage (0-1) at the last successful scrape.", value: (b) => b.scraped?.kvCacheUsage },
  { name: 'switchyard_backend_scrape_stale', help: '1 when the last successful scrape is older than scrape.maxAgeMs (routing uses in-flight counts then).', value: (b) => (b.stale ? 1 : 0) },
  { name: 'switchyard_backend_estimated_waiting_requests', help: 'Requests estimated to be queued at the engine (drives saturation).', value: (b) => b.estimatedWaiting },
  { name: 'switchyard_backend_load_score', help: 'Outstanding work over capacity (drives ranking; 1 = full).', value: (b) => b.loadScore },
  { name: 'switchyard_backend_ejected', help: '1 while the endpoint is ejected after repeated failures.', value: (b) => (b.ejected ? 1 : 0) },
  {
    name: 'switchyard_backend_concurrency_limit',
    help: 'Safe-start limit on the requests this router keeps open to an endpoint of unknown capacity (no series once capacity is configured or the safe start is off).',
    value: (b) => b.concurrencyLimit,
  },
  {
    name: 'switchyard_backend_safe_start_phase',
    help: "Where the safe-start limit of an endpoint of unknown capacity is: 0 slow start (grows on fast stream starts and quiet scrapes), 1 probing (after a backoff: grows at scrapes only), 2 learned (a queue showed its capacity); no series once capacity is configured or the safe start is off. /debug/endpoints says which evidence last moved the limit.",
    value: (b) => (b.safeStartPhase === undefined ? undefined : SAFE_START_PHASES.indexOf(b.safeStartPhase)),
  },
  {
    name: 'switchyard_backend_scrape_age_seconds',
    help: "Seconds since the last successful scrape of the engine's /metrics (since the endpoint joined while none succeeded yet).",
    value: (b) => (b.scrapeAgeMs === undefined ? undefined : b.scrapeAgeMs / 1000),
  },
  { name: 'switchyard_backend_routable', help: '1 while the endpoint is ready, not draining and serves a known model (ejection aside); 0 otherwise.', value: (b) => (b.routable === undefined ? undefined : b.routable ? 1 : 0) },
  { name: 'switchyard_backend_lora_running_adapters', help: "Adapters with requests running on the engine (vllm:lora_requests_info's running_lora_adapters at the last successful scrape).", value: (b) => loraOf(b)?.running.length },
  {
    name: 'switchyard_backend_lora_waiting_adapters',
    help: 'Adapters with requests waiting on the engine that it is not running: they wait for an adapter slot (swap pressure; the LoRA walk avoids such engines).',
    value: (b) => {
      const info = loraOf(b);
      return info?.waiting.filter((adapter) => !info.running.includes(adapter)).length;
    },
  },
  { name: 'switchyard_backend_lora_max_adapters', help: "Adapters the engine can run at once (vLLM's max_lora, --max-loras).", value: (b) => loraOf(b)?.maxLora },
];

/** The engine's LoRA state at the last scrape, if it reports one. */
function loraOf(b: BackendGauges): LoraRequestsInfo | undefined {
  return b.attributes?.get(LORA_REQUESTS_INFO);
}

/**
 * Per model any endpoint in the set serves: how many of its endpoints can
 * take its requests now (routable and not ejected). A model whose every
 * endpoint is not ready, draining or ejected reads 0 (alerts page on it);
 * one no endpoint claims any more has no series.
 */
function readyEndpointsByModel(backends: Iterable<BackendGauges>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const b of backends) {
    const ready = b.routable === true && !b.ejected ? 1 : 0;
    for (const model of b.endpoint?.models ?? []) counts.set(model, (counts.get(model) ?? 0) + ready);
  }
  return counts;
}

/** Registers the per-endpoint gauges and `switchyard_model_ready_endpoints` on `registers`, read from `backends` at every scrape. */
export function registerBackendGauges(registers: Registry[], backends: () => Iterable<BackendGauges>): void {
  for (const spec of BACKEND_GAUGES) {
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: ['backend'],
      registers,
      collect() {
        // Rebuilt on every scrape, so departed endpoints leave no series behind.
        this.reset();
        for (const backend of backends()) {
          const value = spec.value(backend);
          if (value !== undefined) this.set({ backend: backend.id }, value);
        }
      },
    });
  }
  new Gauge({
    name: 'switchyard_model_ready_endpoints',
    help: 'Per model the endpoint set knows: endpoints that can take its requests now (ready, not draining, not ejected). 0: none can.',
    labelNames: ['model'],
    registers,
    collect() {
      this.reset();
      for (const [model, count] of readyEndpointsByModel(backends())) this.set({ model }, count);
    },
  });
}

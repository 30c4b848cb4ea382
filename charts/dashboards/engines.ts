/**
 * "switchyard / Engines": each engine's own numbers, scraped by Prometheus
 * from the engine pods (`vllm:*`), next to what the router replicas estimate
 * about the same engine. The router never re-exports the engines' metrics
 * under their names, so nothing here is counted once per router replica.
 */
import type { DashboardSpec, RowSpec } from './panels.ts';
import { ENGINE, MODEL, perBackend, POOL, quantile, rate, ROUTER, series, sumBy, sumRate } from './promql.ts';
import { datasourceVariable, labelVariable, poolVariable, routerVariables } from './variables.ts';

/** Labels that name one engine pod (k8s target labels) or process (`instance`) and its model. */
const PER_ENGINE = ['namespace', 'pod', 'instance', 'model_name'];
const ENGINE_LEGEND = '{{model_name}} {{pod}} {{instance}}';

const queues: RowSpec = {
  title: 'Queues: the engines\' own numbers next to the router\'s estimate',
  panels: [
    {
      title: 'Engine waiting requests (vllm:num_requests_waiting)',
      description: "Requests queued inside each engine, as the engine itself reports (summed over its engine cores).",
      unit: 'short',
      queries: [{ expr: `${sumBy(PER_ENGINE)}(${series('vllm:num_requests_waiting', ENGINE)})`, legend: ENGINE_LEGEND }],
    },
    {
      title: 'Router-estimated waiting per engine',
      description: "What the router expects is queued at each engine: the last scrape's waiting plus what was sent since, beyond free capacity (drives saturation and shedding). The highest replica estimate.",
      unit: 'short',
      queries: [{ expr: perBackend('max', 'switchyard_backend_estimated_waiting_requests'), legend: '{{backend}}' }],
    },
    {
      title: 'Engine running requests (vllm:num_requests_running) and router in flight',
      description: 'Sequences each engine is running, as it reports, next to the requests all router replicas together have open to it.',
      unit: 'short',
      queries: [
        { expr: `${sumBy(PER_ENGINE)}(${series('vllm:num_requests_running', ENGINE)})`, legend: `running ${ENGINE_LEGEND}` },
        { expr: `${sumBy(['backend'])}(${series('switchyard_backend_in_flight_requests', ROUTER)})`, legend: 'router in flight {{backend}}' },
      ],
    },
    {
      title: 'Router load score per engine',
      description: 'Outstanding work over capacity as the router ranks engines (1 = full), the highest replica view.',
      unit: 'short',
      queries: [{ expr: perBackend('max', 'switchyard_backend_load_score'), legend: '{{backend}}' }],
    },
  ],
};

const caches: RowSpec = {
  title: 'Caches',
  panels: [
    {
      title: 'KV-cache usage (vllm:kv_cache_usage_perc)',
      description: "Each engine's KV-cache usage (1 = full), the fullest of its engine cores. The router sheds at admission.kvCacheThreshold.",
      unit: 'percentunit',
      min: 0,
      max: 1,
      queries: [{ expr: `max by (${PER_ENGINE.join(', ')}) (${series('vllm:kv_cache_usage_perc', ENGINE)})`, legend: ENGINE_LEGEND }],
    },
    {
      title: 'Prefix-cache hit rate',
      description: "Share of prompt tokens each engine found in its prefix cache (vllm:prefix_cache_hits_total over vllm:prefix_cache_queries_total, both rated). Session affinity keeps it high.",
      unit: 'percentunit',
      min: 0,
      max: 1,
      queries: [
        {
          expr: `${sumRate(PER_ENGINE, 'vllm:prefix_cache_hits_total', ENGINE)} / ${sumRate(PER_ENGINE, 'vllm:prefix_cache_queries_total', ENGINE)}`,
          legend: ENGINE_LEGEND,
        },
      ],
    },
  ],
};

const throughput: RowSpec = {
  title: 'Throughput and latency',
  panels: [
    {
      title: 'Requests finished per engine (vllm:request_success_total)',
      description: 'Requests each engine finished per second, as it counts them (any finish reason).',
      unit: 'reqps',
      queries: [{ expr: sumRate(PER_ENGINE, 'vllm:request_success_total', ENGINE), legend: ENGINE_LEGEND }],
    },
    {
      title: 'TTFT p99: engines vs router-observed',
      description: "p99 time to first token as the engines measure it (vllm:time_to_first_token_seconds, all engines), and as the router observes it for streamed 2xx requests (the engine's plus its queue and network). Both use vLLM's bucket bounds.",
      unit: 's',
      queries: [
        { expr: quantile(0.99, 'vllm:time_to_first_token_seconds', [], ENGINE), legend: 'engines (vllm)' },
        { expr: quantile(0.99, 'switchyard_time_to_first_token_seconds', [], ROUTER, MODEL), legend: 'router-observed' },
      ],
    },
  ],
};

const routerView: RowSpec = {
  title: "The router's view of each engine",
  panels: [
    {
      title: 'Ejected, stale, not routable',
      description: 'Per engine: ejected by any replica; load scrape stale on any replica; not routable (not ready, draining, or no known model) on any replica.',
      unit: 'short',
      queries: [
        { expr: perBackend('max', 'switchyard_backend_ejected'), legend: '{{backend}} ejected' },
        { expr: perBackend('max', 'switchyard_backend_scrape_stale'), legend: '{{backend}} stale scrape' },
        { expr: `1 - ${perBackend('min', 'switchyard_backend_routable')}`, legend: '{{backend}} not routable' },
      ],
    },
    {
      title: 'Safe start: limit and phase per engine',
      description:
        "For engines of unknown capacity: the safe-start limit on the requests a replica keeps open (the highest replica's) and its phase on the least advanced replica (0 slow start, 1 probing after a backoff, 2 learned from a queue). After a rollout the limit should climb within a few scrape intervals; a replica that joins with Redis starts at its share of the fleet's. /debug/endpoints says which evidence last moved it. No series once capacity is configured.",
      unit: 'short',
      queries: [
        { expr: perBackend('max', 'switchyard_backend_concurrency_limit'), legend: '{{backend}} limit (highest replica)' },
        { expr: perBackend('min', 'switchyard_backend_safe_start_phase'), legend: '{{backend}} phase' },
      ],
    },
    {
      title: 'Endpoints per InferencePool',
      description:
        "Endpoints each InferencePool (namespace/name) gives, one per target port of each selected pod (their backend ids are namespace/pod:port), the fewest and the most any replica sees: every replica watches the same pool, so the two part only while a change propagates. 0 on every replica: the pool selects no pod, or is unusable (its ready gauge on the Router dashboard, and /debug/endpoints, say why). No series without an inferencepool source.",
      unit: 'short',
      width: 24,
      min: 0,
      queries: [
        { expr: `min by (pool) (${series('switchyard_inference_pool_endpoints', ROUTER, POOL)})`, legend: '{{pool}} (fewest)' },
        { expr: `max by (pool) (${series('switchyard_inference_pool_endpoints', ROUTER, POOL)})`, legend: '{{pool}} (most)' },
      ],
    },
  ],
};

const lora: RowSpec = {
  title: 'LoRA adapters',
  panels: [
    {
      title: 'LoRA requests per adapter and engine',
      description: 'Requests for each LoRA adapter per second, by the engine the router sent them to first (summed over replicas). An adapter concentrated on few engines swaps little; one spread everywhere is loaded everywhere.',
      unit: 'reqps',
      queries: [{ expr: sumRate(['adapter', 'backend'], 'switchyard_lora_requests_total', ROUTER), legend: '{{adapter}} on {{backend}}' }],
    },
    {
      title: 'Adapter starts per engine (swaps, upper bound)',
      description: "Adapters per second that began running on each engine between two of the router's scrapes (the highest replica's count): each a swap-in, or an adapter that stayed loaded resuming after an idle spell. vLLM exports no swap count.",
      unit: 'ops',
      queries: [{ expr: `max by (backend) (${rate('switchyard_backend_lora_adapter_starts_total', ROUTER)})`, legend: '{{backend}}' }],
    },
    {
      title: 'Adapters running and waiting for a slot per engine',
      description: "From each engine's vllm:lora_requests_info at the router's last scrape (the highest replica's view): adapters with requests running, adapters whose requests wait for an adapter slot (swap pressure), and the engine's slots (max_lora).",
      unit: 'short',
      queries: [
        { expr: perBackend('max', 'switchyard_backend_lora_running_adapters'), legend: '{{backend}} running' },
        { expr: perBackend('max', 'switchyard_backend_lora_waiting_adapters'), legend: '{{backend}} waiting for a slot' },
        { expr: perBackend('max', 'switchyard_backend_lora_max_adapters'), legend: '{{backend}} slots' },
      ],
    },
  ],
};

/** The engines dashboard. */
export function enginesDashboard(): DashboardSpec {
  return {
    uid: 'switchyard-engines',
    title: 'switchyard / Engines',
    description: "Inference engines as the switchyard router sees them: the engines' own vLLM metrics next to the router's estimates.",
    variables: [
      datasourceVariable(),
      ...routerVariables(),
      poolVariable(),
      labelVariable('engine_namespace', 'Engine namespace', 'vllm:num_requests_running', 'namespace'),
    ],
    rows: [queues, caches, throughput, routerView, lora],
  };
}

/**
 * The simulator's `/metrics` body: by default vLLM's Prometheus exposition
 * (`vllm:` metric names with `engine` and `model_name` labels); on request
 * the load gauges of another engine's dialect (SGLang, llama.cpp server,
 * TGI), shaped as those engines serve them, so the router's dialect reading
 * runs end to end. The fixtures in tests/fixtures/engine-metrics/, not
 * this file, are the record of what each engine's release really serves.
 */
import { renderLoraMetrics, type LoraGauges } from './lora-info.ts';

/** vLLM's TTFT histogram bucket edges (seconds). */
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];

/** A TTFT histogram in vLLM's buckets. */
export class TtftHistogram {
  readonly counts = new Array<number>(TTFT_BUCKETS.length).fill(0);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < TTFT_BUCKETS.length; i++) if (seconds <= (TTFT_BUCKETS[i] as number)) this.counts[i] = (this.counts[i] as number) + 1;
  }
}

/** Engine state rendered by {@link renderMetrics}. */
export interface EngineGauges {
  readonly model: string;
  readonly running: number;
  readonly waiting: number;
  /** 0-1. */
  readonly kvCacheUsage: number;
  readonly ttft: TtftHistogram;
  readonly requestsSucceeded: number;
  /** Prompt tokens looked up in the prefix cache, and found there, since start (vLLM V1's counters). */
  readonly prefixCacheQueries: number;
  readonly prefixCacheHits: number;
  /** The KV-block model's settings, exported as `vllm:cache_config_info` when set (the model is on). */
  readonly cacheConfig?: { readonly blockSize: number; readonly numGpuBlocks: number };
  /** The LoRA adapters' state, exported (vLLM dialect only) when set: LoRA is on. */
  readonly lora?: LoraGauges;
}

function num(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}

/** Which engine's metric names the simulator serves; `none` answers `/metrics` with 404, as an engine without metrics does. */
export type SimMetricsDialect = 'vllm' | 'sglang' | 'llamacpp' | 'tgi' | 'none';

/** Every {@link SimMetricsDialect}, for flag parsing. */
export const SIM_METRICS_DIALECTS: readonly SimMetricsDialect[] = ['vllm', 'sglang', 'llamacpp', 'tgi', 'none'];

/** Renders the exposition text in `dialect` (not `none`). */
export function renderDialect(dialect: Exclude<SimMetricsDialect, 'none'>, g: EngineGauges): string {
  switch (dialect) {
    case 'vllm':
      return renderMetrics(g);
    case 'sglang':
      return renderSglang(g);
    case 'llamacpp':
      return renderLlamaCpp(g);
    case 'tgi':
      return renderTgi(g);
  }
}

function gauge(name: string, help: string, series: string, value: number): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name}${series} ${num(value)}`];
}

/** SGLang's scheduler gauges: `model_name` (and rank) labels, token usage as a 0-1 ratio. */
function renderSglang(g: EngineGauges): string {
  const labels = `{engine_type="unified",model_name="${escapeLabel(g.model)}",pp_rank="0",tp_rank="0"}`;
  return [
    ...gauge('sglang:num_running_reqs', 'The number of running requests.', labels, g.running),
    ...gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', labels, g.waiting),
    ...gauge('sglang:token_usage', 'The token usage.', labels, g.kvCacheUsage),
    ...gauge('sglang:cache_hit_rate', 'The prefix cache hit rate.', labels, g.prefixCacheQueries === 0 ? 0 : g.prefixCacheHits / g.prefixCacheQueries),
    '',
  ].join('\n');
}

/** llama.cpp server's hand-written exposition: no labels; a request waiting for a free slot is deferred. */
function renderLlamaCpp(g: EngineGauges): string {
  return [
    ...gauge('llamacpp:kv_cache_usage_ratio', 'KV-cache usage. 1 means 100 percent usage.', '', g.kvCacheUsage),
    ...gauge('llamacpp:requests_processing', 'Number of requests processing.', '', g.running),
    ...gauge('llamacpp:requests_deferred', 'Number of requests deferred.', '', g.waiting),
    '',
  ].join('\n');
}

/** TGI's router gauges: no labels, no KV-cache gauge. */
function renderTgi(g: EngineGauges): string {
  return [
    ...gauge('tgi_queue_size', 'Current queue size', '', g.waiting),
    ...gauge('tgi_batch_current_size', 'Current batch size', '', g.running),
    '',
  ].join('\n');
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** Renders the exposition text in vLLM's dialect. */
export function renderMetrics(g: EngineGauges): string {
  const labels = `engine="0",model_name="${escapeLabel(g.model)}"`;
  const lines = [
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running{${labels}} ${num(g.running)}`,
    '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
    '# TYPE vllm:num_requests_waiting gauge',
    `vllm:num_requests_waiting{${labels}} ${num(g.waiting)}`,
    '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
    '# TYPE vllm:kv_cache_usage_perc gauge',
    `vllm:kv_cache_usage_perc{${labels}} ${num(g.kvCacheUsage)}`,
    '# HELP vllm:request_success_total Count of successfully processed requests.',
    '# TYPE vllm:request_success_total counter',
    `vllm:request_success_total{${labels},finished_reason="stop"} ${num(g.requestsSucceeded)}`,
    '# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.',
    '# TYPE vllm:prefix_cache_queries_total counter',
    `vllm:prefix_cache_queries_total{${labels}} ${num(g.prefixCacheQueries)}`,
    '# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.',
    '# TYPE vllm:prefix_cache_hits_total counter',
    `vllm:prefix_cache_hits_total{${labels}} ${num(g.prefixCacheHits)}`,
  ];
  if (g.cacheConfig !== undefined) {
    // vLLM exports its CacheConfig fields as labels of a gauge fixed at 1, with `engine` but no model_name;
    // a subset, valued as vLLM prints them (Python's str()).
    const info = `block_size="${g.cacheConfig.blockSize}",cache_dtype="auto",enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",num_gpu_blocks="${g.cacheConfig.numGpuBlocks}",prefix_caching_hash_algo="builtin"`;
    lines.push('# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig', '# TYPE vllm:cache_config_info gauge', `vllm:cache_config_info{${info}} 1.0`);
  }
  if (g.lora !== undefined) lines.push(...renderLoraMetrics(g.lora));
  lines.push('# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.', '# TYPE vllm:time_to_first_token_seconds histogram');
  TTFT_BUCKETS.forEach((le, i) => lines.push(`vllm:time_to_first_token_seconds_bucket{${labels},le="${le}"} ${num(g.ttft.counts[i] as number)}`));
  lines.push(`vllm:time_to_first_token_seconds_bucket{${labels},le="+Inf"} ${num(g.ttft.count)}`);
  lines.push(`vllm:time_to_first_token_seconds_count{${labels}} ${num(g.ttft.count)}`);
  lines.push(`vllm:time_to_first_token_seconds_sum{${labels}} ${num(g.ttft.sum)}`);
  return `${lines.join('\n')}\n`;
}

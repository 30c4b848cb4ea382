/**
 * The simulator's `/metrics` body in vLLM's Prometheus exposition format:
 * `vllm:` metric names with `engine` and `model_name` labels.
 */

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
}

function num(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}

/** Renders the exposition text. */
export function renderMetrics(g: EngineGauges): string {
  const labels = `engine="0",model_name="${g.model.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
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
  lines.push('# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.', '# TYPE vllm:time_to_first_token_seconds histogram');
  TTFT_BUCKETS.forEach((le, i) => lines.push(`vllm:time_to_first_token_seconds_bucket{${labels},le="${le}"} ${num(g.ttft.counts[i] as number)}`));
  lines.push(`vllm:time_to_first_token_seconds_bucket{${labels},le="+Inf"} ${num(g.ttft.count)}`);
  lines.push(`vllm:time_to_first_token_seconds_count{${labels}} ${num(g.ttft.count)}`);
  lines.push(`vllm:time_to_first_token_seconds_sum{${labels}} ${num(g.ttft.sum)}`);
  return `${lines.join('\n')}\n`;
}

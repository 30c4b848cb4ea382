/**
 * Synthetic but realistic inputs for micro-benchmarks. Deterministic: the same
 * arguments always give the same text, so runs compare like with like.
 */

/** The model every series in {@link realisticVllmExposition} carries. */
export const REALISTIC_MODEL = 'meta-llama/Llama-3.1-8B-Instruct';

/** The engine gauges {@link realisticVllmExposition} reports, per engine (`engine="0"`, `engine="1"`). */
export const REALISTIC_ENGINES = [
  { running: 17, waiting: 4, kvCacheUsage: 0.6234 },
  { running: 15, waiting: 7, kvCacheUsage: 0.7125 },
] as const;

/** What a correct scan of {@link realisticVllmExposition} returns for {@link REALISTIC_MODEL}. */
export const REALISTIC_EXPECTED = { waiting: 11, running: 32, kvCacheUsage: 0.7125 } as const;

// vLLM's own bucket edges (vllm/v1/metrics/loggers.py).
const TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const LATENCY = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];
const TOKENS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];
const FINISHED = ['stop', 'length', 'abort', 'error', 'repetition'];
const CREATED = 1764495236.6218293;

/** A 32-bit LCG: stable pseudo-random counts without Math.random. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** prometheus_client renders every sample as a Python float repr. */
function py(v: number): string {
  if (Math.abs(v) >= 1e16) return v.toExponential();
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

function family(out: string[], name: string, type: string, help: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

function histogram(out: string[], name: string, help: string, edges: readonly number[], labelSets: readonly string[], rand: () => number): void {
  family(out, name, 'histogram', help);
  for (const labels of labelSets) {
    let cumulative = 0;
    let sum = 0;
    for (const le of edges) {
      const n = Math.floor(rand() * 40);
      cumulative += n;
      sum += n * le * 0.7;
      out.push(`${name}_bucket{${labels},le="${le === Math.trunc(le) ? le.toFixed(1) : le}"} ${py(cumulative)}`);
    }
    out.push(`${name}_bucket{${labels},le="+Inf"} ${py(cumulative)}`, `${name}_count{${labels}} ${py(cumulative)}`, `${name}_sum{${labels}} ${py(sum)}`);
  }
  for (const labels of labelSets) out.push(`${name}_created{${labels}} ${py(CREATED)}`);
}

function counter(out: string[], name: string, help: string, samples: readonly [string, number][]): void {
  family(out, name, 'counter', help);
  for (const [labels, v] of samples) out.push(`${name}_total{${labels}} ${py(v)}`);
  for (const [labels] of samples) out.push(`${name}_created{${labels}} ${py(CREATED)}`);
}

function processFamilies(out: string[]): void {
  family(out, 'python_gc_objects_collected_total', 'counter', 'Objects collected during gc');
  for (const g of [0, 1, 2]) out.push(`python_gc_objects_collected_total{generation="${g}"} ${py(18231 - g * 7000)}`);
  family(out, 'python_gc_objects_uncollectable_total', 'counter', 'Uncollectable objects found during GC');
  for (const g of [0, 1, 2]) out.push(`python_gc_objects_uncollectable_total{generation="${g}"} 0.0`);
  family(out, 'python_gc_collections_total', 'counter', 'Number of times this generation was collected');
  for (const g of [0, 1, 2]) out.push(`python_gc_collections_total{generation="${g}"} ${py(1843 >> g)}`);
  family(out, 'python_info', 'gauge', 'Python platform information');
  out.push('python_info{implementation="CPython",major="3",minor="12",patchlevel="11",version="3.12.11"} 1.0');
  const proc: [string, string, string, number][] = [
    ['process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes.', 9.6171970560e10],
    ['process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', 4.211208192e9],
    ['process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.', 1764495201.12],
    ['process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.', 6158.42],
    ['process_open_fds', 'gauge', 'Number of open file descriptors.', 187],
    ['process_max_fds', 'gauge', 'Maximum number of open file descriptors.', 1048576],
  ];
  for (const [name, type, help, v] of proc) {
    family(out, name, type, help);
    out.push(`${name} ${py(v)}`);
  }
}

function engineGauges(out: string[], engines: readonly string[]): void {
  const each = (name: string, type: string, help: string, pick: (i: number) => string): void => {
    family(out, name, type, help);
    engines.forEach((labels, i) => out.push(`${name}{${labels}} ${pick(i)}`));
  };
  const e = (i: number): (typeof REALISTIC_ENGINES)[number] => REALISTIC_ENGINES[i === 0 ? 0 : 1];
  each('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', (i) => py(e(i).running));
  // Shares a prefix with the wanted gauge; a scanner that matches prefixes double-counts.
  family(out, 'vllm:num_requests_waiting_by_reason', 'gauge', 'Number of requests waiting, by reason.');
  engines.forEach((labels, i) => out.push(`vllm:num_requests_waiting_by_reason{${labels},reason="capacity"} ${py(e(i).waiting + 3)}`));
  each('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', (i) => py(e(i).waiting));
  // vLLM 0.10 still exported the deprecated name beside the new one, with the same value.
  each('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage. DEPRECATED: use vllm:kv_cache_usage_perc.', (i) => py(e(i).kvCacheUsage));
  each('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', (i) => py(e(i).kvCacheUsage));
  counter(out, 'vllm:prefix_cache_queries', 'Prefix cache queries, in terms of number of queried tokens.', engines.map((l, i) => [l, 81_234_112 + i * 1_337]));
  counter(out, 'vllm:prefix_cache_hits', 'Prefix cache hits, in terms of number of cached tokens.', engines.map((l, i) => [l, 40_112_096 + i * 4_096]));
  counter(out, 'vllm:num_preemptions', 'Cumulative number of preemption from the engine.', engines.map((l, i) => [l, 12 + i]));
  counter(out, 'vllm:prompt_tokens', 'Number of prefill tokens processed.', engines.map((l, i) => [l, 95_123_004 + i]));
  counter(out, 'vllm:generation_tokens', 'Number of generation tokens processed.', engines.map((l, i) => [l, 21_442_817 + i]));
  const success: [string, number][] = [];
  for (const l of engines) for (const r of FINISHED) success.push([`${l},finished_reason="${r}"`, r === 'stop' ? 183_004 : 211]);
  counter(out, 'vllm:request_success', 'Count of successfully processed requests.', success);
  family(out, 'vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig');
  out.push('vllm:cache_config_info{block_size="16",cache_dtype="auto",calculate_kv_scales="False",enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",num_cpu_blocks="None",num_gpu_blocks="29126",prefix_caching_hash_algo="builtin",swap_space="4"} 1.0');
}

/**
 * A vLLM 0.x/1.x style `/metrics` body for two data-parallel engines serving
 * {@link REALISTIC_MODEL}, with the wanted gauges ({@link REALISTIC_ENGINES})
 * near the middle, not the top, and request histograms repeated per
 * finished_reason and LoRA adapter until the body reaches the target.
 * @param targetBytes minimum length in characters (all ASCII, so bytes); the result overshoots by under one histogram series block (~1 KB).
 */
export function realisticVllmExposition(targetBytes = 200_000): string {
  const engines = ['0', '1'].map((e) => `engine="${e}",model_name="${REALISTIC_MODEL}"`);
  const head: string[] = [];
  processFamilies(head);
  const middle: string[] = [];
  engineGauges(middle, engines);
  const build = (series: number): string => {
    const rand = rng(0x5eed);
    const sets: string[] = [];
    for (let n = 0; n < series; n++) {
      const adapter = n < FINISHED.length * 2 ? '' : `,lora_name="adapter-${Math.floor(n / (FINISHED.length * 2))}"`;
      sets.push(`${engines[n % 2]},finished_reason="${FINISHED[Math.floor(n / 2) % FINISHED.length]}"${adapter}`);
    }
    // Half the series before the gauges and half after keeps the gauges mid-body.
    const half = Math.ceil(series / 2);
    return `${[...head, ...requestHistograms(sets.slice(0, half), rand), ...middle, ...requestHistograms(sets.slice(half), rand)].join('\n')}\n`;
  };
  // Estimate from two sizes, then step up: the result is the smallest body that reaches the target.
  const base = build(0).length;
  const perSeries = build(20).length / 20 - base / 20;
  let series = Math.max(0, Math.floor((targetBytes - base) / perSeries) - 1);
  let text = build(series);
  while (text.length < targetBytes) text = build(++series);
  return text;
}

function requestHistograms(sets: readonly string[], rand: () => number): string[] {
  const out: string[] = [];
  histogram(out, 'vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT, sets, rand);
  histogram(out, 'vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL, sets, rand);
  histogram(out, 'vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', LATENCY, sets, rand);
  histogram(out, 'vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', LATENCY, sets, rand);
  histogram(out, 'vllm:request_prompt_tokens', 'Number of prefill tokens processed.', TOKENS, sets, rand);
  histogram(out, 'vllm:request_generation_tokens', 'Number of generation tokens processed.', TOKENS, sets, rand);
  return out;
}

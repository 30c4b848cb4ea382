/**
 * The engine metric dialects the load view reads: for each engine, the
 * gauges that say how many requests wait, how many run, and how full the KV
 * cache is. Everything the router derives (estimated waiting, saturation,
 * learned capacity, the safe start) is built on these three, so an engine
 * joins the router by naming them here, not by new load logic.
 *
 * The names and their meaning come from each engine's own source at the
 * releases recorded in tests/fixtures/engine-metrics/ (README.md there
 * has the upstream paths): vLLM `vllm:num_requests_waiting`,
 * `vllm:num_requests_running` and `vllm:kv_cache_usage_perc` (called
 * `vllm:gpu_cache_usage_perc` before the rename; read only when the new name
 * is absent, so a release serving both is not double-read); SGLang's
 * scheduler gauges; llama.cpp server's `llamacpp:` gauges, where a request
 * deferred for want of a free slot is the queue; TGI's queue and current
 * batch size, with no KV gauge at all.
 */
import type { EngineDialect } from '../../discovery/endpoint.ts';

export type { EngineDialect };
export { ENGINE_DIALECTS as DIALECTS } from '../../discovery/endpoint.ts';

/** What a wanted series measures. */
export const KIND = { waiting: 'waiting', running: 'running', kv: 'kv', kvOld: 'kvOld' } as const;
export type SeriesKind = (typeof KIND)[keyof typeof KIND];

/**
 * Each dialect's series names by kind. Waiting and running are summed over a
 * model's series (data-parallel engines or ranks export one each), KV-cache
 * usage (0-1) is the max; `kvOld` counts only when no `kv` series is present.
 */
export const DIALECT_SERIES: Readonly<Record<EngineDialect, Readonly<Record<SeriesKind, readonly string[]>>>> = {
  vllm: {
    waiting: ['vllm:num_requests_waiting'],
    running: ['vllm:num_requests_running'],
    kv: ['vllm:kv_cache_usage_perc'],
    kvOld: ['vllm:gpu_cache_usage_perc'],
  },
  sglang: {
    waiting: ['sglang:num_queue_reqs'],
    running: ['sglang:num_running_reqs'],
    kv: ['sglang:token_usage'],
    kvOld: [],
  },
  llamacpp: {
    waiting: ['llamacpp:requests_deferred'],
    running: ['llamacpp:requests_processing'],
    kv: ['llamacpp:kv_cache_usage_ratio'],
    kvOld: [],
  },
  tgi: {
    waiting: ['tgi_queue_size'],
    running: ['tgi_batch_current_size'],
    kv: [],
    kvOld: [],
  },
};

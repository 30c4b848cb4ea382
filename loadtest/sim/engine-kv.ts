/**
 * The prefix-cache and prefill model of one simulated engine (knobs
 * `kvBlocks`, `blockTokens`, `prefillTps`): the body is rendered with the
 * simulator's own template (chat-template.ts), cut into pseudo-tokens and
 * chained block keys (block-hash.ts) and looked up in the engine's block pool
 * (kv-block-cache.ts), which also decides `vllm:kv_cache_usage_perc`.
 *
 * Counting follows vLLM v1 (KVCacheManager.get_computed_blocks): each
 * scheduled request adds its prompt tokens to the queries counter and its
 * reused tokens to the hits counter; reuse is whole blocks, at most the
 * prompt's tokens minus one, since the last prompt token is always computed
 * to produce the first output token.
 *
 * Prefill is a per-engine resource taken in FIFO order: a request's uncached
 * tokens take `uncached / prefillTps` seconds, starting when the prefills
 * admitted before it on this engine are done. That is vLLM v1's order (the
 * scheduler gives its per-step token budget to running requests first, then
 * to waiting ones in arrival order; with chunked prefill a long prompt holds
 * the budget until it is through), and it is what makes a cache miss cost
 * more under load: everyone behind it waits for its prefill. A request whose
 * client leaves keeps its place (the time is not handed back), a small
 * pessimism. The time before the first token is that wait plus compute, plus
 * the fixed `ttftMs` the caller adds.
 */
import { chainSeed, extendText, hashText, type ChainState, type HashedText } from './block-hash.ts';
import { renderPrompt } from './chat-template.ts';
import { KvBlockCache, type PinnedSequence } from './kv-block-cache.ts';

/** Settings of one engine's model. */
export interface EngineKvOptions {
  readonly model: string;
  /** Blocks in the pool (vLLM's num_gpu_blocks), ≥ 1. */
  readonly blocks: number;
  /** Pseudo-tokens per block (vLLM's block_size), ≥ 1. */
  readonly blockTokens: number;
  /** Monotonic clock in milliseconds. */
  readonly clock: () => number;
}

/** One admitted request's cache facts; hand it back to {@link EngineKv.finish} exactly once. */
export interface KvAdmission {
  /** Pseudo-tokens of the rendered prompt. */
  readonly promptTokens: number;
  /** Of those, found computed in the cache. */
  readonly cachedTokens: number;
  /** From admission until its prefill is done (ms): the FIFO wait plus its uncached tokens ÷ prefillTps; 0 when prefillTps is 0. */
  readonly prefillMs: number;
  readonly prompt: HashedText;
  readonly sequence: PinnedSequence;
}

/** The last hash of a body object, so asking several engines about one body hashes it once. */
const memo = new WeakMap<object, { readonly seed: ChainState; readonly blockTokens: number; readonly hashed: HashedText | undefined }>();

/** Prefix cache, prefill lane and counters of one engine; see the file header. */
export class EngineKv {
  readonly model: string;
  readonly blockTokens: number;
  /** Prompt tokens looked up since start (`vllm:prefix_cache_queries_total`). */
  queriedTokens = 0;
  /** Prompt tokens found cached since start (`vllm:prefix_cache_hits_total`). */
  hitTokens = 0;
  readonly #cache: KvBlockCache;
  readonly #seed: ChainState;
  readonly #clock: () => number;
  /** When the prefills admitted so far are done (clock ms). */
  #prefillFreeAt = -Infinity;

  constructor(options: EngineKvOptions) {
    if (!Number.isInteger(options.blockTokens) || options.blockTokens < 1) throw new Error(`blockTokens must be a positive integer, got ${options.blockTokens}`);
    this.model = options.model;
    this.blockTokens = options.blockTokens;
    this.#cache = new KvBlockCache(options.blocks);
    this.#seed = chainSeed(options.model);
    this.#clock = options.clock;
  }

  /** Blocks in the pool. */
  get capacity(): number {
    return this.#cache.capacity;
  }

  /** Blocks held by running requests ÷ capacity (0-1): vLLM's kv_cache_usage_perc. */
  get usage(): number {
    return Math.min(1, this.#cache.pinned / this.#cache.capacity);
  }

  /** Blocks in use, cached or pinned. */
  get usedBlocks(): number {
    return this.#cache.used;
  }

  /**
   * Prompt tokens of `payload` (a chat or completion body) this engine would
   * reuse if it scheduled the request now. Pure: no counter, no recency.
   */
  cachedTokens(payload: Readonly<Record<string, unknown>>): number {
    const prompt = this.#hash(payload);
    return prompt === undefined ? 0 : this.#reusable(prompt, this.#clock());
  }

  /**
   * Schedules a request: counts its lookup, takes its place in the prefill
   * lane and pins its blocks plus room for `outputTokens` more. Undefined for
   * a body without a prompt.
   */
  admit(payload: Readonly<Record<string, unknown>>, prefillTps: number, outputTokens: number): KvAdmission | undefined {
    const prompt = this.#hash(payload);
    if (prompt === undefined) return undefined;
    const now = this.#clock();
    const cachedTokens = this.#reusable(prompt, now);
    this.queriedTokens += prompt.tokens;
    this.hitTokens += cachedTokens;
    let prefillMs = 0;
    if (prefillTps > 0) {
      // Wait plus compute, summed rather than subtracted from clock times, so an idle lane gives exactly the compute time.
      prefillMs = Math.max(0, this.#prefillFreeAt - now) + ((prompt.tokens - cachedTokens) * 1000) / prefillTps;
      this.#prefillFreeAt = now + prefillMs;
    }
    const total = Math.ceil((prompt.tokens + Math.max(0, outputTokens)) / this.blockTokens);
    const sequence = this.#cache.pin(prompt.keys, now + prefillMs, Math.max(0, total - prompt.keys.length));
    return { promptTokens: prompt.tokens, cachedTokens, prefillMs, prompt, sequence };
  }

  /**
   * Ends a request: its prompt's blocks, and those of `output` (the text it
   * generated; undefined when it did not finish), become evictable.
   */
  finish(admission: KvAdmission, output: string | undefined): void {
    const keys = output === undefined || output === '' ? admission.prompt.keys : extendText(admission.prompt, output, this.blockTokens).keys;
    this.#cache.release(admission.sequence, keys, this.#clock());
  }

  /** Drops every cached block no running request holds (POST /reset_prefix_cache). Counters keep counting, as vLLM's do. */
  reset(): void {
    this.#cache.reset();
  }

  /** Whole blocks reused, capped below the prompt length (the last token is always computed). */
  #reusable(prompt: HashedText, now: number): number {
    const cap = Math.floor(Math.max(0, prompt.tokens - 1) / this.blockTokens);
    return Math.min(this.#cache.matchedBlocks(prompt.keys, now), cap) * this.blockTokens;
  }

  #hash(payload: Readonly<Record<string, unknown>>): HashedText | undefined {
    if (payload['model'] !== this.model) return undefined;
    const seen = memo.get(payload);
    if (seen !== undefined && seen.seed.h1 === this.#seed.h1 && seen.seed.h2 === this.#seed.h2 && seen.blockTokens === this.blockTokens) return seen.hashed;
    const text = renderPrompt(payload);
    const hashed = text === undefined ? undefined : hashText(text, this.#seed, this.blockTokens);
    memo.set(payload, { seed: this.#seed, blockTokens: this.blockTokens, hashed });
    return hashed;
  }
}

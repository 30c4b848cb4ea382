/**
 * A token-count model of vLLM's automatic prefix cache, enough for its two
 * counters (`vllm:prefix_cache_queries_total`, `vllm:prefix_cache_hits_total`,
 * both in tokens) to behave the way routing makes them behave: a
 * conversation's next turn finds its earlier turns cached only on the engine
 * that served them. A prompt is a list of blocks (chat messages, or one block
 * for a completion prompt); a block hits when every block up to it was seen
 * before on this engine. Tokens are estimated as 4 characters each.
 *
 * Used only while the KV-block model (engine-kv.ts) is off (`kvBlocks` 0), so
 * that the default engine's counters still move (the demo's and the
 * dashboards e2e suite's prefix-cache panel reads them).
 */
import { createHash } from 'node:crypto';

/** Cached prefixes kept before the oldest are evicted (a bounded cache, like the engine's). */
const MAX_ENTRIES = 20_000;
const CHARS_PER_TOKEN = 4;

/** The prefix cache of one simulated engine. */
export class PrefixCache {
  /** Tokens looked up so far (the queries counter). */
  queriedTokens = 0;
  /** Tokens found cached so far (the hits counter). */
  hitTokens = 0;
  /** Prefix digest → true, in insertion order (oldest first, evicted first). */
  readonly #seen = new Map<string, true>();

  /** Counts one prompt's lookup and caches all its prefixes. `blocks` are the prompt's parts in order. */
  lookup(blocks: readonly string[]): void {
    const hash = createHash('sha256');
    let hitting = true;
    for (const block of blocks) {
      const tokens = Math.ceil(block.length / CHARS_PER_TOKEN);
      hash.update(block).update('\0');
      const key = hash.copy().digest('base64');
      this.queriedTokens += tokens;
      if (hitting && this.#seen.has(key)) {
        this.hitTokens += tokens;
      } else {
        hitting = false;
        this.#remember(key);
      }
    }
  }

  /** Forgets every cached prefix; the counters keep counting. */
  reset(): void {
    this.#seen.clear();
  }

  #remember(key: string): void {
    if (this.#seen.size >= MAX_ENTRIES) this.#seen.delete(this.#seen.keys().next().value as string);
    this.#seen.set(key, true);
  }
}

/** The prompt blocks of a chat or completion request body: one per message, or the prompt itself. */
export function promptBlocks(payload: Readonly<Record<string, unknown>>): string[] {
  const messages = payload['messages'];
  if (Array.isArray(messages)) return messages.map(messageBlock);
  const prompt = payload['prompt'];
  if (typeof prompt === 'string') return [prompt];
  return prompt === undefined ? [] : [JSON.stringify(prompt)];
}

/**
 * One message as a prefix block. The common message (a role and a string
 * content) is keyed by those two directly: serialising it again costs the
 * simulator ~0.8 ms per 200 KB message, on the core it shares with the load
 * generator in the benchmarks, where it would be measured as queueing.
 */
function messageBlock(message: unknown): string {
  if (message !== null && typeof message === 'object' && !Array.isArray(message)) {
    const fields = message as Record<string, unknown>;
    const { role, content } = fields;
    if (typeof role === 'string' && typeof content === 'string' && Object.keys(fields).length === 2) return `${role}\u0000${content}`;
  }
  return JSON.stringify(message);
}

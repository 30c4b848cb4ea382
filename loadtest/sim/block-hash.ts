/**
 * Pseudo-tokens and chained block keys of the simulated prefix cache.
 *
 * The simulator has no tokenizer: a pseudo-token is 4 bytes of the rendered
 * UTF-8 text (the last one zero-padded), about what BPE tokenizers average on
 * English and code. A block is `blockTokens` consecutive pseudo-tokens; only
 * full blocks get a key, as in vLLM, and a block's key hashes its own tokens
 * on top of the previous block's key, so it depends on every token before it:
 * two prompts share block i only if they agree on everything up to its end.
 *
 * The hash is two 32-bit murmur3-style lanes in plain JS (about 35 µs per
 * 32 KiB on this 2-core machine, about 20× faster than a node:crypto SHA-256
 * per block; see loadtest/scenarios/micro/sim-kv-bench.ts), folded into one 53-bit
 * integer key so that the cache's maps key on numbers, not strings. A
 * collision among the few hundred thousand blocks of a benchmark is about
 * n² / 2⁵⁴, negligible for a simulator. Keys are seeded per model, as vLLM
 * seeds its block hashes, so two models never share blocks.
 */

/** The chain's running state: the two lanes after the last full block (or the seed). */
export interface ChainState {
  readonly h1: number;
  readonly h2: number;
}

/** A rendered text's pseudo-tokens and full-block keys. */
export interface HashedText {
  /** The rendered text, kept so that generated output can extend the chain. */
  readonly text: string;
  /** Pseudo-tokens: ⌈UTF-8 bytes / 4⌉. */
  readonly tokens: number;
  /** Keys of the full blocks in order; integers in [0, 2⁵³). */
  readonly keys: readonly number[];
  /** Chain state after the last full block (the seed when there is none). */
  readonly state: ChainState;
}

/** Bytes per pseudo-token. */
export const TOKEN_BYTES = 4;

/** The chain's starting state for `model` (its blocks never match another model's). */
export function chainSeed(model: string): ChainState {
  let h1 = 0x5a17c0de;
  let h2 = 0x0badcafe;
  for (let i = 0; i < model.length; i++) {
    h1 = Math.imul(h1 ^ model.charCodeAt(i), 0x01000193);
    h2 = Math.imul(h2 ^ model.charCodeAt(i), 0x9e3779b1);
  }
  return { h1: fmix(h1), h2: fmix(h2 ^ h1) };
}

/** Pseudo-tokens and full-block keys of `text`, chained from `seed`. `blockTokens` ≥ 1. */
export function hashText(text: string, seed: ChainState, blockTokens: number): HashedText {
  return hashFrom(text, 0, seed, [], blockTokens);
}

/**
 * `prefix.text + more`, hashed by continuing `prefix`'s chain: only the
 * blocks past `prefix`'s full blocks are hashed again (generated output
 * appended to a prompt).
 */
export function extendText(prefix: HashedText, more: string, blockTokens: number): HashedText {
  return hashFrom(prefix.text + more, prefix.keys.length, prefix.state, prefix.keys, blockTokens);
}

function hashFrom(text: string, fromBlock: number, state: ChainState, keys: readonly number[], blockTokens: number): HashedText {
  const bytes = Buffer.byteLength(text, 'utf8');
  const tokens = Math.ceil(bytes / TOKEN_BYTES);
  const fullBlocks = Math.floor(bytes / (TOKEN_BYTES * blockTokens));
  if (fullBlocks <= fromBlock) return { text, tokens, keys, state };
  const padded = tokens * TOKEN_BYTES;
  const buffer = scratchFor(padded);
  buffer.write(text, 0, 'utf8');
  buffer.fill(0, bytes, padded);
  const words = new Uint32Array(buffer.buffer, 0, tokens);
  const out = keys.slice();
  let { h1, h2 } = state;
  for (let b = fromBlock; b < fullBlocks; b++) {
    const end = (b + 1) * blockTokens;
    for (let i = b * blockTokens; i < end; i++) {
      const w = words[i] as number;
      let k = Math.imul(w, 0xcc9e2d51);
      k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
      h1 ^= k;
      h1 = (Math.imul((h1 << 13) | (h1 >>> 19), 5) + 0xe6546b64) | 0;
      k = Math.imul(w, 0x85ebca6b);
      k = Math.imul((k << 13) | (k >>> 19), 0xc2b2ae35);
      h2 ^= k;
      h2 = (Math.imul((h2 << 17) | (h2 >>> 15), 9) + 0x38b34ae5) | 0;
    }
    h1 = fmix(h1 ^ blockTokens);
    h2 = fmix(h2 ^ h1);
    out.push((h1 >>> 0) * 0x200000 + (h2 >>> 11));
  }
  return { text, tokens, keys: out, state: { h1, h2 } };
}

/** Prompts up to this size reuse one buffer (hashing is synchronous); larger ones get their own. */
const SCRATCH_MAX = 1 << 20;
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * A buffer of at least `size` bytes with its own ArrayBuffer at offset 0, so
 * a Uint32Array can view it (Buffer.from may share a pool slab at any offset).
 */
function scratchFor(size: number): Buffer {
  if (size <= scratch.length) return scratch;
  if (size > SCRATCH_MAX) return Buffer.allocUnsafeSlow(size);
  scratch = Buffer.allocUnsafeSlow(Math.min(SCRATCH_MAX, 2 ** Math.ceil(Math.log2(size))));
  return scratch;
}

/** murmur3's finaliser: every input bit affects every output bit. */
function fmix(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

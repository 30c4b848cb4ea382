/**
 * Prefix keys: what a keyless prompt says about the prefix-cache state it
 * could reuse, from its canonical bytes alone (research note
 * prefix-affinity.md §4; the scorer is scorers/prefix-affinity.ts).
 *
 * SDK clients resend a conversation's whole history every turn, so the
 * prompt names its own conversation (the bytes through its first user
 * message never change), how much the previous turn's engine already holds
 * (everything before the last message), and the opening it shares with
 * other conversations (a system prompt, a document). The rules that follow:
 * - Keys come from the scanner's canonical prefix (JSON text without
 *   whitespace outside strings), never from a tokenizer: two replicas, or
 *   two turns formatted differently, compute the same keys.
 * - Every hash is seeded by the model and `cache_salt`: engines never share
 *   cache blocks across either, so neither may the keys.
 * - One hash chain over 512-byte blocks serves every key: block i's hash
 *   covers all bytes before it, so equal hashes mean an equal prefix.
 * - Pure and allocation-free on the hot path: the caller owns the output
 *   (see {@link createPrefixKeys}); the one allocation per call is the
 *   DataView over the prefix.
 */
import { hashString, mix32 } from '../load/hash.ts';
import { stringEnd } from './json-strings.ts';
import { xxh32 } from './xxh32.ts';

/** What the prompt is: chat messages (a list of role-tagged items) or one completion prompt. */
export type PromptKind = 'chat' | 'completion';

/** Bytes per hashed block. */
export const BLOCK_BYTES = 512;
/** Most block hashes kept: the first 32 KiB of the canonical prefix. */
export const MAX_BLOCKS = 64;
/** The conversation key covers at most this many bytes. */
export const CONVERSATION_MAX_BYTES = 64 * 1024;
/** The group key covers the first this many bytes of the conversation span. */
export const GROUP_BYTES = 8 * 1024;
/** Bytes per estimated token (no tokenizer: ~4 bytes of English or JSON per token). */
export const BYTES_PER_TOKEN = 4;
/** Estimated tokens per block ({@link BLOCK_BYTES} / {@link BYTES_PER_TOKEN}). */
export const TOKENS_PER_BLOCK = BLOCK_BYTES / BYTES_PER_TOKEN;
/** The canonical prefix length (`promptPrefixBytes`) that lets every key see all it may use. */
export const PREFIX_KEY_BYTES = CONVERSATION_MAX_BYTES;

/**
 * The keys of one prompt. Mutable and owned by whoever created it (see
 * {@link createPrefixKeys}): {@link prefixKeys} overwrites every field, so a
 * caller that keeps keys past the next call must use its own object.
 */
export interface PrefixKeys {
  /**
   * 32-bit hash of the conversation: the canonical prefix through the end of
   * the first message whose role is `user` (at most
   * {@link CONVERSATION_MAX_BYTES}). Equal on every turn of one
   * conversation. For a completion prompt, equal to {@link group}.
   */
  conversation: number;
  /**
   * 32-bit hash of the first {@link GROUP_BYTES} of the conversation span:
   * conversations that open alike (one long system prompt, one document)
   * share it. Equal to {@link conversation} when that span is shorter. For a
   * completion prompt, the hash of its first {@link GROUP_BYTES}.
   */
  group: number;
  /**
   * Estimated tokens (bytes / 4) of the canonical messages through the last
   * assistant message: what the engine that served the previous turn holds
   * for this conversation alone (a first turn's system prompt is the group's,
   * not the conversation's). The canonical prefix length / 4 when the prefix
   * was cut. 0 without an assistant message, and for completions.
   */
  historyTokens: number;
  /**
   * Estimated tokens (bytes / 4) of the canonical messages before the first
   * message whose role is `user`: a system prompt, a document, instructions,
   * which an application sends every user of it: all of the first
   * {@link CONVERSATION_MAX_BYTES} when no user message begins within them.
   * 0 when a user message comes first, and for completions.
   */
  openingTokens: number;
  /** Valid entries of {@link blocks}, 0-{@link MAX_BLOCKS}: ⌈min(prefix length, 32 KiB) / 512⌉. */
  blockCount: number;
  /**
   * Chained 32-bit hashes: entry i covers canonical bytes [0, min(512·(i+1), length)),
   * so two prompts agree on entries 0..k-1 exactly when (hash collisions aside) their
   * first k blocks are equal. Only the first {@link blockCount} entries are meaningful.
   */
  blocks: Uint32Array;
}

/** A fresh keys object with room for `capacity` blocks (the one allocation a caller needs); {@link MAX_BLOCKS} fits every prompt. */
export function createPrefixKeys(capacity = MAX_BLOCKS): PrefixKeys {
  return { conversation: 0, group: 0, historyTokens: 0, openingTokens: 0, blockCount: 0, blocks: new Uint32Array(capacity) };
}

/**
 * Blocks a canonical prefix of `length` bytes fills. Keys made per request
 * are sized to it: a typed array over 64 bytes (16 blocks) lives outside the
 * JavaScript heap, and allocating one costs ~0.7 µs against ~30 ns inside it,
 * for every request, while a short chat needs one block.
 */
export function blocksFor(length: number): number {
  return Math.min(MAX_BLOCKS, Math.ceil(length / BLOCK_BYTES));
}

/** The hash seed of a model and cache salt. */
function seedOf(model: string, cacheSalt: string | undefined): number {
  const seed = hashString(model);
  return cacheSalt === undefined ? seed : mix32(seed, hashString(cacheSalt));
}

/**
 * Computes the keys of one prompt into `into` (overwriting it) and returns it.
 * @param model the model the request names; part of every hash.
 * @param cacheSalt the request's `cache_salt`, if any; part of every hash.
 * @param kind chat (`messages`, an `input` array) or completion; a chat prefix that is
 *   not a JSON array is keyed as a completion.
 * @param prefix the canonical prompt prefix (json-body-scanner's `promptPrefix`); only read.
 *   Keys use its first {@link PREFIX_KEY_BYTES}.
 * @param truncated the canonical prompt goes on past `prefix`.
 * @param into the output; `into.blocks` must hold at least `blocksFor(prefix.length)` entries ({@link blocksFor}).
 */
export function prefixKeys(
  model: string,
  cacheSalt: string | undefined,
  kind: PromptKind,
  prefix: Uint8Array,
  truncated: boolean,
  into: PrefixKeys = createPrefixKeys(blocksFor(prefix.length)),
): PrefixKeys {
  const length = prefix.length;
  const chat = kind === 'chat' && prefix[0] === 0x5b;
  let spanEnd: number; // the conversation span: [0, spanEnd)
  if (chat) {
    const text = Buffer.isBuffer(prefix) ? prefix : Buffer.from(prefix.buffer, prefix.byteOffset, length);
    const scanned = Math.min(length, CONVERSATION_MAX_BYTES);
    const userEnd = elementEnd(text.subarray(0, scanned), ROLE_USER, false);
    spanEnd = userEnd === -1 ? scanned : userEnd;
    into.openingTokens = Math.floor((matchedStart === -1 ? scanned : matchedStart) / BYTES_PER_TOKEN);
    into.historyTokens = Math.floor((truncated ? length : Math.max(0, elementEnd(text, ROLE_ASSISTANT, true))) / BYTES_PER_TOKEN);
  } else {
    spanEnd = Math.min(length, GROUP_BYTES);
    into.historyTokens = 0;
    into.openingTokens = 0;
  }
  chain(new DataView(prefix.buffer, prefix.byteOffset, length), seedOf(model, cacheSalt), spanEnd, into);
  return into;
}

/**
 * Runs the block chain over the first 32 KiB and through `spanEnd`, filling
 * blocks, conversation (the chain's hash at `spanEnd`) and group (at
 * min(`spanEnd`, 8 KiB)). A key ending inside a block hashes that block's
 * head from the previous block's hash, so every key is the chain at its length.
 */
function chain(view: DataView, seed: number, spanEnd: number, into: PrefixKeys): void {
  const length = view.byteLength;
  const groupEnd = Math.min(spanEnd, GROUP_BYTES);
  const limit = Math.max(Math.min(length, MAX_BLOCKS * BLOCK_BYTES), spanEnd);
  const blocks = into.blocks;
  let previous = seed;
  let conversation = spanEnd === 0 ? xxh32(view, 0, 0, seed) : 0;
  let group = conversation;
  let count = 0;
  for (let start = 0; start < limit; start += BLOCK_BYTES) {
    const end = Math.min(start + BLOCK_BYTES, length);
    if (groupEnd > start && groupEnd < end) group = xxh32(view, start, groupEnd, previous);
    if (spanEnd > start && spanEnd < end) conversation = spanEnd === groupEnd ? group : xxh32(view, start, spanEnd, previous);
    if (count === MAX_BLOCKS && end > spanEnd) break; // past the kept blocks and the span: done
    previous = xxh32(view, start, end, previous);
    if (count < MAX_BLOCKS) blocks[count++] = previous;
    if (end === groupEnd) group = previous;
    if (end === spanEnd) conversation = previous;
  }
  into.conversation = conversation >>> 0;
  into.group = group >>> 0;
  into.blockCount = count;
}

const QUOTE = 0x22;

/**
 * Where the last call of {@link elementEnd} saw the first element with its
 * role begin (the offset of its `{`, whether or not it ended within the
 * prefix), or -1 when it saw none. Set by every call: a module-level result
 * rather than an object per call, on the hot path.
 */
let matchedStart = -1;

/**
 * Offset just past the first element (or with `last`, the last) of the
 * canonical array `p` that is an object with `role` (`"role":"…"`) among its
 * own keys, or -1 when none ends within `p`; sets {@link matchedStart}.
 * Tracks depth; strings are skipped whole.
 */
function elementEnd(p: Buffer, role: Buffer, last: boolean): number {
  const limit = p.length;
  let depth = 1; // inside the array
  let matches = false;
  let end = -1;
  let start = -1;
  matchedStart = -1;
  for (let i = 1; i < limit; ) {
    const c = p[i] as number;
    if (c === QUOTE) {
      if (depth === 2 && !matches && isRole(p, i, limit, role)) {
        matches = true;
        if (matchedStart === -1) matchedStart = start;
      }
      i = stringEnd(p, i + 1);
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      if (depth === 1) start = i;
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth === 1 && matches) {
        if (!last) return i + 1;
        end = i + 1;
      }
      if (depth === 0) return end; // the array ended
    } else if (c === 0x2c && depth === 1) {
      matches = false;
    }
    i++;
  }
  return end;
}

const ROLE_USER = Buffer.from('"role":"user"');
const ROLE_ASSISTANT = Buffer.from('"role":"assistant"');

/** The key at `at` (a quote at element-object depth) is `"role"` with the value `role` names (`"role":"…"`). */
function isRole(p: Buffer, at: number, limit: number, role: Buffer): boolean {
  const n = role.length;
  if (at + n >= limit) return false;
  for (let k = 1; k < n; k++) if (p[at + k] !== role[k]) return false;
  const next = p[at + n];
  return next === 0x2c || next === 0x7d;
}


/**
 * The prefix group table: per model, what recent traffic says about each
 * group of prompts that open alike (one system prompt, one document), for
 * the prefix-affinity scorer (research note prefix-affinity.md §4).
 *
 * Peer routers' prefix indexes grew without bound (a trie past 16 GB, an
 * unread index that OOMed every 15 minutes), so everything here is capped:
 * at most `maxGroups` groups per model and `maxModels` models, each evicted
 * least recently recorded first, and a group costs a fixed ~375 bytes
 * (its last request's block hashes are most of it): a full model ~1.5 MiB,
 * the worst case (every model full) ~360 MiB, measured by
 * loadtest/scenarios/micro/prefix-groups-memory.ts. A group the table forgot
 * reads as new: its requests spread as rare ones until it is seen again.
 *
 * Time lives here, not in scheduling: the caller passes `nowMs` (any
 * millisecond clock; a time before the model's last record counts as that
 * time) and decay is lazy, by the time elapsed since an entry was last
 * touched, so a record or a read is O(1) plus ≤ 64 block comparisons, with
 * no timers.
 */

/** The request keys the table reads (scheduling's `PrefixKeys` has them). */
export interface GroupKeys {
  /** 32-bit group hash. */
  readonly group: number;
  /** Estimated tokens of history before the last message. */
  readonly historyTokens: number;
  /** Valid entries of `blocks`, 0-64. */
  readonly blockCount: number;
  /** Chained 32-bit hashes of the prompt's 512-byte blocks (~128 tokens each). */
  readonly blocks: Uint32Array;
}

/** What the table says about one request's group and model. */
export interface GroupReading {
  /** The group's share of the model's recent requests (EWMA, time constant τ), 0-1; 0 for a group not in the table. */
  readonly share: number;
  /**
   * Tokens that consecutive requests of the group have had in common (EWMA
   * of whole blocks in common × 128); for the group's second request, what
   * it has in common with the first; 0 for a group not in the table.
   */
  readonly sharedPrefixTokens: number;
  /**
   * Share of the model's recent prompt tokens (estimated over each prompt's
   * first 32 KiB, and its history) that a cache could have served: each
   * request's history or its common prefix with its group's previous
   * request, whichever is longer; 0-1, and 0 for a model not in the table:
   * reuse is what traffic shows, never presumed.
   */
  readonly reuse: number;
  /** The engine (its 32-bit id hash) the group's last request was sent to; undefined when none was recorded. */
  readonly placedOn: number | undefined;
}

/** Limits and rates of the table. */
export interface PrefixGroupSettings {
  /** Most groups kept per model (≥ 1). */
  readonly maxGroups: number;
  /** Most models kept (≥ 1); the least recently recorded model is dropped whole. */
  readonly maxModels: number;
  /** Time constant of the decayed counts (ms, > 0). */
  readonly tauMs: number;
  /** EWMA weight of each new common-prefix sample, 0-1. */
  readonly sharedPrefixWeight: number;
}

/** Defaults: 4096 groups per model (~1.5 MiB), 256 models, τ = 60 s, weight 0.3. */
export const PREFIX_GROUP_DEFAULTS: PrefixGroupSettings = { maxGroups: 4_096, maxModels: 256, tauMs: 60_000, sharedPrefixWeight: 0.3 };

const MAX_BLOCKS = 64;
const TOKENS_PER_BLOCK = 128;
const FIRST_CAPACITY = 4;
// Fields of a slot in ModelGroups' typed arrays.
const NUMBERS = 4;
const COUNT = 0;
const TIME = 1;
const SHARED = 2;
const PLACED = 3;
const LINKS = 4;
const OLDER = 0;
const NEWER = 1;
const KEY = 2;
const BLOCK_COUNT = 3;
/** Bytes per slot in the typed arrays. */
const SLOT_BYTES = NUMBERS * 8 + LINKS * 4 + MAX_BLOCKS * 4;
/** Rough bytes per Map entry (V8 ordered hash table with its spare room). */
const INDEX_ENTRY_BYTES = 40;
const MODEL_BYTES = 400;

// No reuse is presumed before traffic shows it. A prior of 8,192 reusable tokens sent a fresh
// router's first ~190 prompts of short, never-repeated traffic to their hash homes, and the
// engines' batches stayed uneven long after (workload E at 120%: TTFT p99 1.35× least-load's,
// 1.0× without the prior; docs/performance.md). Prompts that open with a template are presumed
// shared by their shape instead (scorers/prefix-affinity.ts).
const NOTHING: GroupReading = Object.freeze({ share: 0, sharedPrefixTokens: 0, reuse: 0, placedOn: undefined });

/** The table: see the file header. Owns its memory; callers only pass keys in. */
export class PrefixGroups {
  readonly #settings: PrefixGroupSettings;
  readonly #models = new Map<string, ModelGroups>();
  // Recency of models, a doubly linked list through ModelGroups (a Map's own order
  // would do, but finding its oldest entry walks over every deleted one first).
  #oldest: ModelGroups | undefined;
  #newest: ModelGroups | undefined;

  constructor(settings: Partial<PrefixGroupSettings> = {}) {
    this.#settings = { ...PREFIX_GROUP_DEFAULTS, ...settings };
    if (!(this.#settings.maxGroups >= 1 && this.#settings.maxModels >= 1 && this.#settings.tauMs > 0)) {
      throw new Error('prefix groups: maxGroups and maxModels must be ≥ 1 and tauMs > 0');
    }
  }

  /** What the table knows about `keys`' group of `model` at `nowMs`. Changes nothing. */
  read(model: string, keys: GroupKeys, nowMs: number): GroupReading {
    const groups = this.#models.get(model);
    return groups === undefined ? NOTHING : groups.read(keys, nowMs);
  }

  /**
   * Counts one request of `model` with `keys` at `nowMs`, sent to the engine
   * whose id hash is `placedOn` (call once per request, when it is admitted).
   */
  record(model: string, keys: GroupKeys, nowMs: number, placedOn?: number): void {
    let groups = this.#newest?.model === model ? this.#newest : this.#models.get(model);
    if (groups === undefined) {
      const oldest = this.#oldest;
      if (this.#models.size >= this.#settings.maxModels && oldest !== undefined) {
        this.#unlink(oldest);
        this.#models.delete(oldest.model);
      }
      groups = new ModelGroups(model, this.#settings);
      this.#models.set(model, groups);
      this.#append(groups);
    } else if (groups !== this.#newest) {
      this.#unlink(groups);
      this.#append(groups);
    }
    groups.record(keys, nowMs, placedOn);
  }

  #unlink(groups: ModelGroups): void {
    if (groups.newer === undefined) this.#newest = groups.older;
    else groups.newer.older = groups.older;
    if (groups.older === undefined) this.#oldest = groups.newer;
    else groups.older.newer = groups.newer;
    groups.older = groups.newer = undefined;
  }

  #append(groups: ModelGroups): void {
    groups.older = this.#newest;
    if (this.#newest === undefined) this.#oldest = groups;
    else this.#newest.newer = groups;
    this.#newest = groups;
  }

  /** Size of the table: models, groups, and an estimate of the bytes it holds. */
  stats(): { models: number; groups: number; approxBytes: number } {
    let groups = 0;
    let approxBytes = 0;
    for (const model of this.#models.values()) {
      groups += model.size;
      approxBytes += model.approxBytes();
    }
    return { models: this.#models.size, groups, approxBytes };
  }
}

/**
 * One model's groups, in three flat typed arrays indexed by slot (no object
 * per group, and three allocations per growth, whatever the field count).
 */
class ModelGroups {
  readonly model: string;
  /** Neighbours in the table's model recency list. */
  older: ModelGroups | undefined;
  newer: ModelGroups | undefined;
  readonly #settings: PrefixGroupSettings;
  /** Group hash (as int32, so V8 keeps it unboxed) → slot. */
  readonly #index = new Map<number, number>();
  #capacity = 0;
  /** Per slot: decayed request count (as of TIME), TIME (ms of the last record), SHARED (EWMA tokens; NaN before a 2nd request), PLACED (the engine of the last request; NaN: none). */
  #numbers = new Float64Array(0);
  /** Per slot: OLDER and NEWER (recency list, -1 ends it: same reason as the models' list), KEY (the group hash), BLOCK_COUNT. */
  #links = new Int32Array(0);
  /** {@link MAX_BLOCKS} per slot: the last request's block hashes. */
  #blocks = new Uint32Array(0);
  #oldestSlot = -1;
  #newestSlot = -1;
  // Model-wide decayed sums, all as of #totalTime (undefined until the first record, whose clock starts it).
  #total = 0;
  #reusable = 0;
  #promptTokens = 0;
  #totalTime: number | undefined;

  constructor(model: string, settings: PrefixGroupSettings) {
    this.model = model;
    this.#settings = settings;
  }

  get size(): number {
    return this.#index.size;
  }

  approxBytes(): number {
    return MODEL_BYTES + this.#capacity * SLOT_BYTES + this.#index.size * INDEX_ENTRY_BYTES;
  }

  read(keys: GroupKeys, nowMs: number): GroupReading {
    const since = this.#totalTime ?? nowMs;
    nowMs = Math.max(nowMs, since);
    const slot = this.#index.get(keys.group | 0);
    const reuse = this.#promptTokens > 0 ? this.#reusable / this.#promptTokens : 0;
    if (slot === undefined) return { share: 0, sharedPrefixTokens: 0, reuse, placedOn: undefined };
    const numbers = this.#numbers;
    const at = slot * NUMBERS;
    const total = this.#total * this.#decay(nowMs - since);
    const count = (numbers[at + COUNT] as number) * this.#decay(nowMs - (numbers[at + TIME] as number));
    const shared = numbers[at + SHARED] as number;
    // A group's second request has no average yet: what it shares with the first is the evidence.
    const sharedPrefixTokens = Number.isNaN(shared) ? this.#commonBlocks(slot, keys) * TOKENS_PER_BLOCK : shared;
    const placed = numbers[at + PLACED] as number;
    return { share: total > 0 ? Math.min(1, count / total) : 0, sharedPrefixTokens, reuse, placedOn: Number.isNaN(placed) ? undefined : placed };
  }

  record(keys: GroupKeys, nowMs: number, placedOn: number | undefined): void {
    // Time never runs backwards within a model, so no group can outweigh the model's total.
    const since = this.#totalTime ?? nowMs;
    nowMs = Math.max(nowMs, since);
    const key = keys.group | 0;
    let slot = this.#index.get(key);
    let commonTokens = 0;
    let at: number;
    if (slot === undefined) {
      slot = this.#freeSlot();
      this.#index.set(key, slot);
      this.#links[slot * LINKS + KEY] = key;
      at = slot * NUMBERS;
      this.#numbers[at + COUNT] = 1;
      this.#numbers[at + SHARED] = NaN;
    } else {
      this.#unlink(slot);
      at = slot * NUMBERS;
      const numbers = this.#numbers;
      numbers[at + COUNT] = (numbers[at + COUNT] as number) * this.#decay(nowMs - (numbers[at + TIME] as number)) + 1;
      commonTokens = this.#commonBlocks(slot, keys) * TOKENS_PER_BLOCK;
      const shared = numbers[at + SHARED] as number;
      numbers[at + SHARED] = Number.isNaN(shared) ? commonTokens : shared + this.#settings.sharedPrefixWeight * (commonTokens - shared);
    }
    this.#numbers[at + TIME] = nowMs;
    this.#numbers[at + PLACED] = placedOn ?? NaN;
    this.#append(slot);
    this.#keepBlocks(slot, keys);
    const decay = this.#decay(nowMs - since);
    const promptTokens = Math.max(keys.blockCount * TOKENS_PER_BLOCK, keys.historyTokens);
    this.#total = this.#total * decay + 1;
    this.#promptTokens = this.#promptTokens * decay + promptTokens;
    this.#reusable = this.#reusable * decay + Math.min(promptTokens, Math.max(keys.historyTokens, commonTokens));
    this.#totalTime = nowMs;
  }

  /** e^(-elapsed/τ). */
  #decay(elapsedMs: number): number {
    return Math.exp(-elapsedMs / this.#settings.tauMs);
  }

  /** A slot for a new group: a never-used one, else the least recently recorded group's. */
  #freeSlot(): number {
    const used = this.#index.size;
    if (used < this.#capacity) return used;
    if (this.#capacity < this.#settings.maxGroups) {
      this.#grow(Math.min(this.#settings.maxGroups, Math.max(FIRST_CAPACITY, this.#capacity * 2)));
      return used;
    }
    const oldest = this.#oldestSlot;
    this.#unlink(oldest);
    this.#index.delete(this.#links[oldest * LINKS + KEY] as number);
    return oldest;
  }

  #unlink(slot: number): void {
    const links = this.#links;
    const older = links[slot * LINKS + OLDER] as number;
    const newer = links[slot * LINKS + NEWER] as number;
    if (newer === -1) this.#newestSlot = older;
    else links[newer * LINKS + OLDER] = older;
    if (older === -1) this.#oldestSlot = newer;
    else links[older * LINKS + NEWER] = newer;
  }

  #append(slot: number): void {
    const links = this.#links;
    const newest = this.#newestSlot;
    links[slot * LINKS + OLDER] = newest;
    links[slot * LINKS + NEWER] = -1;
    if (newest === -1) this.#oldestSlot = slot;
    else links[newest * LINKS + NEWER] = slot;
    this.#newestSlot = slot;
  }

  #grow(capacity: number): void {
    const numbers = new Float64Array(capacity * NUMBERS);
    numbers.set(this.#numbers);
    const links = new Int32Array(capacity * LINKS);
    links.set(this.#links);
    const blocks = new Uint32Array(capacity * MAX_BLOCKS);
    blocks.set(this.#blocks);
    this.#numbers = numbers;
    this.#links = links;
    this.#blocks = blocks;
    this.#capacity = capacity;
  }

  /** Leading blocks that `keys` shares with the group's last request (the hashes are chained: the first difference ends it). */
  #commonBlocks(slot: number, keys: GroupKeys): number {
    const n = Math.min(this.#links[slot * LINKS + BLOCK_COUNT] as number, keys.blockCount, MAX_BLOCKS);
    const blocks = this.#blocks;
    const base = slot * MAX_BLOCKS;
    let i = 0;
    while (i < n && blocks[base + i] === keys.blocks[i]) i++;
    return i;
  }

  #keepBlocks(slot: number, keys: GroupKeys): void {
    const n = Math.min(keys.blockCount, MAX_BLOCKS);
    const blocks = this.#blocks;
    const base = slot * MAX_BLOCKS;
    for (let i = 0; i < n; i++) blocks[base + i] = keys.blocks[i] as number;
    this.#links[slot * LINKS + BLOCK_COUNT] = n;
  }
}

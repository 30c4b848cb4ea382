/**
 * The KV-block pool of one simulated engine, modelled on vLLM's automatic
 * prefix caching (v1 KVCacheManager + BlockPool), as seen from outside:
 *
 * - `capacity` blocks in all. A block holds one full block of tokens under
 *   its chain key (block-hash.ts), or is a keyless reservation for the part
 *   of a running sequence that is not a full block yet (the prompt's tail and
 *   the output to come).
 * - A running sequence pins its blocks: a pinned block is never evicted.
 *   When the sequence finishes, its blocks, now including the full blocks of
 *   its generated output, become evictable, most recently used; like vLLM
 *   they are queued tail first, so a conversation's later blocks go before
 *   its prefix.
 * - New blocks take free space first, then evict the least recently used
 *   evictable block. A block is reused by a later prompt only once it has
 *   been computed (`readyAt`): a prompt arriving while the same prefix is
 *   still in prefill recomputes it, as it would on vLLM.
 * - When neither free nor evictable blocks are left (everything pinned), the
 *   rest of the sequence is not cached. A real engine would keep such a
 *   request waiting or preempt another; the simulator's admission is by
 *   batch slots only, so size the pool for maxSeqs × the longest sequence if
 *   that difference matters to a result.
 *
 * Memory is bounded by `capacity`: one map of at most `capacity` blocks. The
 * evictable blocks form an intrusive doubly linked list, not a second Map:
 * V8's Map used as a queue (delete the first key, then ask for the first key
 * again) skips every deleted slot until it rehashes, which made evicting 500
 * blocks cost 12 ms.
 */

/** One keyed block. */
interface Block {
  readonly key: number;
  /** Running sequences holding it; 0 means evictable (and linked in the LRU list). */
  refs: number;
  /** Clock time (ms) its tokens are computed; a lookup before that misses. */
  readonly readyAt: number;
  /** Neighbours in the LRU list while evictable: `older` is evicted first. */
  older: Block | undefined;
  newer: Block | undefined;
}

/** The blocks one running sequence holds; hand it back to {@link KvBlockCache.release} exactly once. */
export interface PinnedSequence {
  /** Its keyed blocks, in chain order. */
  readonly blocks: Block[];
  /** Every key it asked for was stored (the chain may be extended at release). */
  readonly complete: boolean;
  /** Keyless blocks it reserved. */
  readonly reserved: number;
  released: boolean;
}

/** The block pool of one engine; see the file header for the model. */
export class KvBlockCache {
  /** Blocks in the pool (≥ 1). */
  readonly capacity: number;
  /** Every keyed block, pinned or not. */
  readonly #blocks = new Map<number, Block>();
  /** The LRU list of keyed blocks no sequence holds: `#oldest` is evicted first. */
  #oldest: Block | undefined;
  #newest: Block | undefined;
  #evictableCount = 0;
  /** Keyless blocks held by running sequences. */
  #reserved = 0;
  /** Keyed blocks held by at least one running sequence. */
  #pinnedKeyed = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`KV block capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
  }

  /** Blocks held by running sequences (keyed and reserved); ≤ capacity. */
  get pinned(): number {
    return this.#pinnedKeyed + this.#reserved;
  }

  /** Blocks in use: keyed (cached or pinned) plus reserved; ≤ capacity. */
  get used(): number {
    return this.#blocks.size + this.#reserved;
  }

  /** Keyed blocks that could be evicted right now. */
  get evictable(): number {
    return this.#evictableCount;
  }

  /** Whether `key` is held (computed or not). */
  has(key: number): boolean {
    return this.#blocks.has(key);
  }

  /**
   * How many leading `keys` are cached and computed by `now` (ms). Pure: it
   * changes neither the recency order nor any count.
   */
  matchedBlocks(keys: readonly number[], now: number): number {
    let n = 0;
    for (const key of keys) {
      const block = this.#blocks.get(key);
      if (block === undefined || block.readyAt > now) break;
      n++;
    }
    return n;
  }

  /**
   * Pins a starting sequence: the blocks of `keys` (held ones gain a
   * reference, missing ones are stored as computed at `readyAt`), then
   * `reserve` keyless blocks. Stops storing at the first block that finds no
   * room (see the header).
   */
  pin(keys: readonly number[], readyAt: number, reserve: number): PinnedSequence {
    const blocks: Block[] = [];
    for (const key of keys) {
      const block = this.#hold(key, readyAt);
      if (block === undefined) break;
      blocks.push(block);
    }
    let reserved = 0;
    for (; reserved < reserve && this.#makeRoom(); reserved++) this.#reserved++;
    return { blocks, complete: blocks.length === keys.length, reserved, released: false };
  }

  /**
   * Ends a sequence: drops its reservation, stores the blocks of `keys`
   * beyond those it pinned (its output, computed at `now`), and makes all its
   * blocks evictable, tail first. `keys` must start with the keys it was
   * pinned with. A second release of the same sequence does nothing.
   */
  release(sequence: PinnedSequence, keys: readonly number[], now: number): void {
    if (sequence.released) return;
    sequence.released = true;
    this.#reserved -= sequence.reserved;
    const blocks = sequence.blocks;
    if (sequence.complete) {
      for (let i = blocks.length; i < keys.length; i++) {
        const block = this.#hold(keys[i] as number, now);
        if (block === undefined) break;
        blocks.push(block);
      }
    }
    for (let i = blocks.length - 1; i >= 0; i--) {
      const block = blocks[i] as Block;
      if (--block.refs > 0) continue;
      this.#pinnedKeyed--;
      this.#link(block);
    }
  }

  /** Drops every block no running sequence holds (vLLM's reset_prefix_cache); returns how many. */
  reset(): number {
    const dropped = this.#evictableCount;
    while (this.#oldest !== undefined) {
      const block = this.#oldest;
      this.#unlink(block);
      this.#blocks.delete(block.key);
    }
    return dropped;
  }

  /** A reference on `key`'s block, stored if missing; undefined when there is no room. */
  #hold(key: number, readyAt: number): Block | undefined {
    let block = this.#blocks.get(key);
    if (block === undefined) {
      if (!this.#makeRoom()) return undefined;
      block = { key, refs: 0, readyAt, older: undefined, newer: undefined };
      this.#blocks.set(key, block);
    } else if (block.refs === 0) {
      this.#unlink(block);
    }
    if (block.refs++ === 0) this.#pinnedKeyed++;
    return block;
  }

  /** Frees one block if the pool is full, evicting the least recently used; false when all are pinned. */
  #makeRoom(): boolean {
    if (this.#blocks.size + this.#reserved < this.capacity) return true;
    const oldest = this.#oldest;
    if (oldest === undefined) return false;
    this.#unlink(oldest);
    this.#blocks.delete(oldest.key);
    return true;
  }

  /** Appends `block` as the most recently used evictable block. */
  #link(block: Block): void {
    block.older = this.#newest;
    block.newer = undefined;
    if (this.#newest === undefined) this.#oldest = block;
    else this.#newest.newer = block;
    this.#newest = block;
    this.#evictableCount++;
  }

  /** Takes `block` out of the LRU list. */
  #unlink(block: Block): void {
    if (block.older === undefined) this.#oldest = block.newer;
    else block.older.newer = block.newer;
    if (block.newer === undefined) this.#newest = block.older;
    else block.newer.older = block.older;
    block.older = undefined;
    block.newer = undefined;
    this.#evictableCount--;
  }
}

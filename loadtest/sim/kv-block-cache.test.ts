import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { chainSeed, extendText, hashText } from './block-hash.ts';
import { KvBlockCache, type PinnedSequence } from './kv-block-cache.ts';

/** Pins `keys` computed at time 0 and releases them at once: a finished request. */
function run(cache: KvBlockCache, keys: number[]): void {
  cache.release(cache.pin(keys, 0, 0), keys, 0);
}

describe('simulated KV block pool', () => {
  it('finds a finished sequence again, up to the first block that differs', () => {
    const cache = new KvBlockCache(16);
    run(cache, [1, 2, 3]);
    assert.equal(cache.matchedBlocks([1, 2, 3, 4], 0), 3);
    assert.equal(cache.matchedBlocks([1, 9, 3], 0), 1, 'a chain stops at its first miss even when later keys are held');
    assert.equal(cache.matchedBlocks([7], 0), 0);
  });

  it('evicts least recently used first, and a finished sequence tail first', () => {
    const cache = new KvBlockCache(4);
    run(cache, [1, 2]); // queued tail first: 2, then 1
    run(cache, [3, 4]); // then 4, 3
    run(cache, [5]);
    assert.equal(cache.has(2), false, 'the oldest sequence loses its tail first');
    assert.equal(cache.has(1), true);
    run(cache, [1]); // reused: now the most recent
    run(cache, [6]);
    assert.equal(cache.has(4), false, 'the next oldest goes, not the block just reused');
    assert.equal(cache.has(1), true);
    assert.ok(cache.used <= cache.capacity);
  });

  it('never evicts the blocks of a running sequence, and caches nothing when only pinned blocks are left', () => {
    const cache = new KvBlockCache(3);
    const running = cache.pin([1, 2], 0, 1);
    assert.equal(cache.pinned, 3);
    const late = cache.pin([4, 5], 0, 0);
    assert.equal(late.blocks.length, 0);
    assert.equal(late.complete, false);
    assert.deepEqual([cache.has(1), cache.has(2)], [true, true]);
    cache.release(late, [4, 5], 0);
    cache.release(running, [1, 2, 3], 0);
    assert.equal(cache.pinned, 0);
    assert.deepEqual([cache.has(1), cache.has(2), cache.has(3)], [true, true, true], 'the output block took the reserved room');
  });

  it('does not reuse a block before it is computed', () => {
    const cache = new KvBlockCache(8);
    const first = cache.pin([1, 2], 100, 0);
    assert.equal(cache.matchedBlocks([1, 2], 99), 0);
    assert.equal(cache.matchedBlocks([1, 2], 100), 2);
    cache.release(first, [1, 2], 100);
  });

  it('reset drops what no running sequence holds', () => {
    const cache = new KvBlockCache(8);
    run(cache, [1, 2]);
    const running = cache.pin([3], 0, 0);
    assert.equal(cache.reset(), 2);
    assert.deepEqual([cache.has(1), cache.has(3)], [false, true]);
    cache.release(running, [3], 0);
    assert.equal(cache.has(3), true);
  });

  it('property: stays within capacity and keeps every pinned block, whatever the order of pins, releases and resets', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('pin' as const), root: fc.integer({ min: 0, max: 5 }), length: fc.integer({ min: 0, max: 6 }), reserve: fc.integer({ min: 0, max: 3 }), output: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ kind: fc.constant('release' as const), which: fc.nat() }),
      fc.record({ kind: fc.constant('reset' as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(op, { maxLength: 60 }), (capacity, ops) => {
        const cache = new KvBlockCache(capacity);
        const running: { seq: PinnedSequence; keys: number[] }[] = [];
        for (const o of ops) {
          if (o.kind === 'pin') {
            // Chains share prefixes when they share a root, like conversations of one system prompt.
            const keys = Array.from({ length: o.length + o.output }, (_, i) => o.root * 100 + i);
            running.push({ seq: cache.pin(keys.slice(0, o.length), 0, o.reserve), keys });
          } else if (o.kind === 'release' && running.length > 0) {
            const [done] = running.splice(o.which % running.length, 1);
            if (done !== undefined) cache.release(done.seq, done.keys, 0);
          } else if (o.kind === 'reset') {
            cache.reset();
          }
          assert.ok(cache.used <= capacity, `used ${cache.used} > capacity ${capacity}`);
          assert.ok(cache.pinned <= cache.used);
          for (const { seq } of running) for (const block of seq.blocks) assert.ok(cache.has(block.key), 'a pinned block was evicted');
        }
        for (const { seq, keys } of running) cache.release(seq, keys, 0);
        assert.equal(cache.pinned, 0);
        assert.equal(cache.evictable, cache.used);
      }),
      { numRuns: 300 },
    );
  });
});

describe('simulated block keys', () => {
  const seed = chainSeed('m');

  it('counts ~4-byte pseudo-tokens and keys only full blocks', () => {
    const hashed = hashText('x'.repeat(4 * 16 * 3 + 5), seed, 16);
    assert.equal(hashed.tokens, 16 * 3 + 2);
    assert.equal(hashed.keys.length, 3);
  });

  it("chains: a block's key depends on every byte before it", () => {
    const text = 'a'.repeat(64 * 4);
    const base = hashText(text, seed, 16).keys;
    const late = hashText(`${text.slice(0, 64 * 2 + 3)}b${text.slice(64 * 2 + 4)}`, seed, 16).keys;
    assert.deepEqual(late.slice(0, 2), base.slice(0, 2));
    assert.notEqual(late[2], base[2]);
    assert.notEqual(late[3], base[3], 'identical bytes after a difference still differ');
    assert.equal(new Set(base).size, 4, 'repeated content in different positions gets different keys');
    assert.notDeepEqual(hashText(text, chainSeed('other'), 16).keys, base, 'keys are seeded by model');
  });

  it('property: extending a hashed text equals hashing the whole text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), fc.integer({ min: 1, max: 8 }), (head, tail, blockTokens) => {
        assert.deepEqual(extendText(hashText(head, seed, blockTokens), tail, blockTokens), hashText(head + tail, seed, blockTokens));
      }),
      { numRuns: 300 },
    );
  });
});

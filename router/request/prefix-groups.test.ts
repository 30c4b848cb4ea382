import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PrefixGroups, type GroupKeys } from './prefix-groups.ts';

/** Keys of a request in `group` whose first `blocks.length` block hashes are `blocks`. */
function keys(group: number, blocks: readonly number[] = [], historyTokens = 0): GroupKeys {
  return { group, historyTokens, blockCount: blocks.length, blocks: Uint32Array.from(blocks) };
}

/** `n` chained-looking block hashes: the first `common` shared by every `variant`, the rest its own. */
function blocks(n: number, common: number, variant: number): number[] {
  return Array.from({ length: n }, (_, i) => (i < common ? 1000 + i : variant * 100_000 + i));
}

const SECOND = 1_000;

describe('prefix group table', () => {
  it("converges to each group's share of the model's requests, and forgets with time constant τ", () => {
    const table = new PrefixGroups();
    let now = 0;
    // A steady mix: group 1 three requests in four, group 2 one in four, one request every 100 ms.
    for (let i = 0; i < 4_000; i++, now += 100) table.record('m', keys(i % 4 === 3 ? 2 : 1), now);
    assert.ok(Math.abs(table.read('m', keys(1), now).share - 0.75) < 0.02);
    assert.ok(Math.abs(table.read('m', keys(2), now).share - 0.25) < 0.02);
    assert.equal(table.read('m', keys(3), now).share, 0);
    assert.equal(table.read('other', keys(1), now).share, 0);
    // Group 1 stops; after 3 τ of group 2 alone, group 1 has ~5% of the decayed mass left.
    for (let end = now + 180 * SECOND; now < end; now += 100) table.record('m', keys(2), now);
    const share1 = table.read('m', keys(1), now).share;
    assert.ok(share1 > 0.03 && share1 < 0.05, `share of the stopped group ${share1}`);
  });

  it('remembers the engine each group last went to', () => {
    const table = new PrefixGroups();
    table.record('m', keys(1), 0, 42);
    table.record('m', keys(2), 0);
    assert.equal(table.read('m', keys(1), 0).placedOn, 42);
    assert.equal(table.read('m', keys(2), 0).placedOn, undefined);
    assert.equal(table.read('m', keys(3), 0).placedOn, undefined);
    table.record('m', keys(1), 1, 7);
    assert.equal(table.read('m', keys(1), 1).placedOn, 7);
  });

  it('decays lazily by the injected clock: a read later sees older records weigh less', () => {
    const table = new PrefixGroups({ tauMs: 60 * SECOND });
    table.record('m', keys(1), 0);
    table.record('m', keys(2), 60 * SECOND);
    // At 60 s, group 1's one request weighs e^-1 against group 2's 1.
    assert.ok(Math.abs(table.read('m', keys(1), 60 * SECOND).share - Math.exp(-1) / (Math.exp(-1) + 1)) < 1e-9);
    // Reading changes nothing, and a clock that went backwards reads as the model's last record time.
    assert.equal(table.read('m', keys(1), 60 * SECOND).share, table.read('m', keys(1), 60 * SECOND).share);
    assert.equal(table.read('m', keys(2), 0).share, table.read('m', keys(2), 60 * SECOND).share);
    table.record('m', keys(1), 30 * SECOND);
    assert.ok(Math.abs(table.read('m', keys(1), 60 * SECOND).share - (Math.exp(-1) + 1) / (Math.exp(-1) + 2)) < 1e-9);
  });

  it("learns the prefix a group's consecutive requests share (EWMA, weight 0.3) from their block hashes", () => {
    const table = new PrefixGroups();
    table.record('m', keys(7, blocks(20, 10, 1)), 0);
    assert.equal(table.read('m', keys(7), 0).sharedPrefixTokens, 0); // one request, and a reader that shares nothing with it
    // The second request's reading: what it has in common with the first.
    assert.equal(table.read('m', keys(7, blocks(20, 10, 2)), 0).sharedPrefixTokens, 10 * 128);
    table.record('m', keys(7, blocks(20, 10, 2)), 1);
    assert.equal(table.read('m', keys(7), 1).sharedPrefixTokens, 10 * 128);
    table.record('m', keys(7, blocks(30, 30, 3)), 2); // shares only the 10 common blocks with the previous one
    assert.equal(table.read('m', keys(7), 2).sharedPrefixTokens, 10 * 128);
    table.record('m', keys(7, blocks(30, 30, 4)), 3); // the same 30 blocks as the previous one
    assert.ok(Math.abs(table.read('m', keys(7), 3).sharedPrefixTokens - (1280 + 0.3 * (30 * 128 - 1280))) < 1e-9);
    table.record('m', keys(7, blocks(5, 0, 5)), 4); // nothing in common
    assert.ok(table.read('m', keys(7), 4).sharedPrefixTokens < 30 * 128 * 0.7);
  });

  it('keeps at most maxGroups groups per model, dropping the least recently recorded, and at most maxModels models', () => {
    const table = new PrefixGroups({ maxGroups: 8, maxModels: 3 });
    for (let g = 0; g < 1_000; g++) {
      table.record('m', keys(g, blocks(64, 64, g)), g);
      if (g % 4 === 0) table.record('m', keys(-5), g); // kept recent
    }
    assert.equal(table.stats().groups, 8);
    assert.ok(table.read('m', keys(999), 1_000).share > 0);
    assert.ok(table.read('m', keys(-5), 1_000).share > 0);
    assert.equal(table.read('m', keys(500), 1_000).share, 0);
    // A record is a use: the group recorded again outlives the one recorded after it.
    const lru = new PrefixGroups({ maxGroups: 2 });
    lru.record('m', keys(1), 0);
    lru.record('m', keys(2), 1);
    lru.record('m', keys(1), 2);
    lru.record('m', keys(3), 3);
    assert.ok(lru.read('m', keys(1), 3).share > 0);
    assert.equal(lru.read('m', keys(2), 3).share, 0);
    // A read is not a use: a group only read is evicted in its turn.
    const small = new PrefixGroups({ maxGroups: 2 });
    small.record('m', keys(1), 0);
    small.record('m', keys(2), 1);
    small.read('m', keys(1), 2);
    small.record('m', keys(3), 3);
    assert.equal(small.read('m', keys(1), 3).share, 0);
    assert.ok(small.read('m', keys(2), 3).share > 0);
    // A flood of model names keeps the most recent maxModels.
    for (let m = 0; m < 100; m++) table.record(`junk-${m}`, keys(1), 2_000 + m);
    assert.deepEqual({ models: table.stats().models, groups: table.stats().groups }, { models: 3, groups: 3 });
    assert.equal(table.read('m', keys(999), 3_000).share, 0);
    assert.ok(table.read('junk-99', keys(1), 3_000).share > 0);
  });

  it('bounds its memory: the estimate grows with the groups held and stops at the cap', () => {
    const table = new PrefixGroups({ maxGroups: 1_024 });
    table.record('m', keys(1), 0);
    const one = table.stats().approxBytes;
    for (let g = 0; g < 5_000; g++) table.record('m', keys(g, blocks(64, 0, g)), g);
    const full = table.stats().approxBytes;
    for (let g = 5_000; g < 20_000; g++) table.record('m', keys(g, blocks(64, 0, g)), g);
    assert.ok(one < 16 * 1024, `one group: ${one} bytes`);
    assert.equal(table.stats().approxBytes, full);
    assert.ok(full < 1_024 * 400, `1024 groups: ${full} bytes`);
  });

  it("estimates the model's reusable share of prompt tokens: history and group prefixes, not fresh prompts", () => {
    const chat = new PrefixGroups();
    // Multi-turn: each turn's history is most of its prompt.
    for (let t = 1; t <= 20; t++) chat.record('m', keys(1, blocks(Math.min(64, 4 * t), 4 * t, 1), 4 * (t - 1) * 128), t);
    assert.ok(chat.read('m', keys(99), 21).reuse > 0.7);
    const fresh = new PrefixGroups();
    for (let r = 0; r < 100; r++) fresh.record('m', keys(r, blocks(8, 0, r)), r);
    // Nothing is presumed: prompts never sent twice show no reuse, and neither does a model not seen yet.
    assert.equal(fresh.read('m', keys(1), 100).reuse, 0);
    assert.equal(fresh.read('unseen', keys(1), 100).reuse, 0);
    // On an epoch clock too, the first record is the whole estimate: half of its 8 blocks were history.
    const epoch = new PrefixGroups();
    epoch.record('m', keys(1, blocks(8, 0, 1), 4 * 128), 1_764_547_200_000);
    assert.equal(epoch.read('m', keys(1), 1_764_547_200_000).reuse, 0.5);
    // One shared document, a different question each time: the document's blocks count.
    const docs = new PrefixGroups();
    for (let r = 0; r < 100; r++) docs.record('m', keys(5, blocks(50, 48, r)), r);
    assert.ok(docs.read('m', keys(5), 100).reuse > 0.9);
  });

  it('shares stay in [0, 1] and sum to at most 1 over the groups held, for any record sequence (property)', () => {
    const step = fc.record({ group: fc.integer({ min: 0, max: 12 }), model: fc.constantFrom('a', 'b'), dt: fc.integer({ min: -1_000, max: 120_000 }) });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 200 }), fc.integer({ min: 1, max: 8 }), (steps, maxGroups) => {
        const table = new PrefixGroups({ maxGroups });
        let now = 0;
        for (const s of steps) {
          now += s.dt;
          table.record(s.model, keys(s.group), now);
        }
        assert.ok(table.stats().groups <= 2 * maxGroups);
        for (const model of ['a', 'b']) {
          let sum = 0;
          for (let g = 0; g <= 12; g++) {
            const { share } = table.read(model, keys(g), now);
            assert.ok(share >= 0 && share <= 1);
            sum += share;
          }
          assert.ok(sum <= 1 + 1e-9, `sum ${sum}`);
        }
      }),
      { numRuns: 500 },
    );
  });
});

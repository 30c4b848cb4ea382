/**
 * Prefix affinity end to end: keyless multi-turn conversations, as SDK
 * clients send them (every turn resends the whole history), through a real
 * router to real simulated engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { postJson, servedBy, startFleet, type Fleet } from '../kit/harness.ts';

const SYSTEM = 'You are a helpful assistant. '.repeat(40);

/** Turn `turn` of conversation `c`: the whole history so far, then a new question. */
function turnBody(c: number, turn: number): unknown {
  const messages: { role: string; content: string }[] = [{ role: 'system', content: SYSTEM }];
  for (let t = 0; t <= turn; t++) {
    messages.push({ role: 'user', content: `Conversation ${c}, question ${t}: ${'why is the sky blue? '.repeat(20)}` });
    if (t < turn) messages.push({ role: 'assistant', content: `Answer ${t} of conversation ${c}. ${'Because of Rayleigh scattering. '.repeat(30)}` });
  }
  return { model: 'chat', messages, max_tokens: 8 };
}

describe('prefix affinity', () => {
  let fleet: Fleet;
  before(async () => {
    const engine = { model: 'chat', knobs: { ttftMs: 0, itlMs: 0, maxSeqs: 64 } };
    fleet = await startFleet([engine, engine, engine, engine], ['--routing-policy', 'prefix-affinity']);
  });
  after(() => fleet.close());

  it('keeps every turn of a keyless conversation on one engine, and spreads conversations over the engines', async () => {
    const CONVERSATIONS = 24;
    const TURNS = 4;
    const homes = new Map<number, Set<number>>();
    for (let turn = 0; turn < TURNS; turn++) {
      for (let c = 0; c < CONVERSATIONS; c++) {
        const requestId = `c${c}-t${turn}`;
        const response = await postJson(`${fleet.base}/v1/chat/completions`, turnBody(c, turn), { 'x-request-id': requestId });
        assert.equal(response.status, 200);
        const engine = servedBy(fleet.engines, requestId);
        const seen = homes.get(c) ?? new Set<number>();
        seen.add(engine);
        homes.set(c, seen);
      }
    }
    const moved = [...homes.values()].filter((engines) => engines.size > 1).length;
    assert.equal(moved, 0, `${moved} of ${CONVERSATIONS} conversations changed engine`);
    const used = new Set([...homes.values()].map((engines) => [...engines][0]));
    assert.ok(used.size >= 3, `conversations used only ${used.size} of 4 engines`);
  });

  it('sends the same conversation to the same engine from a router that never saw it (replicas agree)', async () => {
    const other = await startFleet([], ['--routing-policy', 'prefix-affinity'], fleet.engines.map((e) => e.url));
    try {
      for (let c = 100; c < 110; c++) {
        const first = `a-${c}`;
        const second = `b-${c}`;
        assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, turnBody(c, 2), { 'x-request-id': first })).status, 200);
        assert.equal((await postJson(`${other.base}/v1/chat/completions`, turnBody(c, 3), { 'x-request-id': second })).status, 200);
        assert.equal(servedBy(fleet.engines, second), servedBy(fleet.engines, first), `conversation ${c}`);
      }
    } finally {
      await other.close();
    }
  });

  it('counts its decisions as prefix_hit', async () => {
    const metrics = await fetch(`${fleet.admin}/metrics`).then((r) => r.text());
    const hits = /switchyard_policy_decisions_total\{policy="prefix-affinity",outcome="prefix_hit"\} (\d+)/.exec(metrics);
    assert.ok(hits && Number(hits[1]) > 0, 'no prefix_hit decisions counted');
  });

  it('after an engine resets its prefix cache, each of its conversations misses once and then hits again, on the same engine', async () => {
    const kvEngine = { model: 'kv', knobs: { ttftMs: 0, itlMs: 0, maxSeqs: 64, kvBlocks: 4_000, prefillTps: 0 } };
    const kv = await startFleet([kvEngine, kvEngine, kvEngine], ['--routing-policy', 'prefix-affinity']);
    try {
      const ask = async (c: number, turn: number) => {
        const requestId = `kv-${c}-${turn}`;
        const body = { ...(turnBody(c, turn) as object), model: 'kv' };
        assert.equal((await postJson(`${kv.base}/v1/chat/completions`, body, { 'x-request-id': requestId })).status, 200);
        const engine = servedBy(kv.engines, requestId);
        return { engine, cached: kv.engines[engine]?.sent(requestId)?.kv?.cachedTokens ?? -1 };
      };
      const SHARED_TOKENS = 400;
      const homes: number[] = [];
      for (let c = 0; c < 9; c++) homes.push((await ask(c, 0)).engine);
      for (let c = 0; c < 9; c++) assert.ok((await ask(c, 1)).cached > 0, `conversation ${c} turn 1 hit`);
      const reset = homes[0] as number;
      kv.engines[reset]?.resetPrefixCache();
      for (let c = 0; c < 9; c++) {
        const turn2 = await ask(c, 2);
        assert.equal(turn2.engine, homes[c], 'the conversation stays home');
        // A miss: at most the system prompt all conversations share (~300 tokens) is cached again, not the conversation's history.
        if (homes[c] === reset) assert.ok(turn2.cached <= SHARED_TOKENS, `conversation ${c} missed once on the reset engine (${turn2.cached} cached)`);
        else assert.ok(turn2.cached > SHARED_TOKENS);
        assert.ok((await ask(c, 3)).cached > SHARED_TOKENS, `conversation ${c} hits its history again after the miss`);
      }
    } finally {
      await kv.close();
    }
  });
});

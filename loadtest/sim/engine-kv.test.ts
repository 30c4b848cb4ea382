import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderPrompt, renderToolCalls } from './chat-template.ts';
import { EngineKv } from './engine-kv.ts';

const MODEL = 'kv-model';
/** ~970 pseudo-tokens (60 full blocks) of text that varies along its length. */
const SYSTEM = Array.from({ length: 800 }, (_, i) => `w${i} `).join('');

function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

function engine(options: { blocks?: number; clock?: () => number } = {}): EngineKv {
  return new EngineKv({ model: MODEL, blocks: options.blocks ?? 10_000, blockTokens: 16, clock: options.clock ?? (() => 0) });
}

const chat = (...messages: { role: string; content: string | null; tool_calls?: unknown[] }[]) => ({ model: MODEL, messages });

describe('simulated engine prefix cache and prefill', () => {
  it("hits the previous turn's prompt and generated output on the next turn", () => {
    const kv = engine();
    const turn1 = chat({ role: 'system', content: SYSTEM }, { role: 'user', content: 'first question?' });
    const first = kv.admit(turn1, 0, 50);
    assert.ok(first !== undefined);
    assert.equal(first.cachedTokens, 0);
    const answer = 'A long answer that the engine generated, long enough to fill several blocks of its own. '.repeat(4);
    kv.finish(first, answer);
    const turn2 = chat({ role: 'system', content: SYSTEM }, { role: 'user', content: 'first question?' }, { role: 'assistant', content: answer }, { role: 'user', content: 'second?' });
    const second = kv.admit(turn2, 0, 50);
    assert.ok(second !== undefined);
    assert.ok(second.cachedTokens > first.promptTokens + 60, `cached ${second.cachedTokens} should cover the first prompt (${first.promptTokens}) and most of the answer`);
    assert.ok(second.cachedTokens < second.promptTokens);
    kv.finish(second, undefined);
  });

  it('hits a resent tool call whatever the key order and ids the client kept', () => {
    const kv = engine();
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const ask = { model: MODEL, tools, messages: [{ role: 'user', content: SYSTEM }] };
    const first = kv.admit(ask, 0, 10);
    assert.ok(first !== undefined);
    const args = JSON.stringify({ location: 'Zürich', notes: 'x'.repeat(300) });
    kv.finish(first, renderToolCalls([{ function: { name: 'get_weather', arguments: args } }]));
    const resent = { role: 'assistant', content: null, tool_calls: [{ function: { arguments: args, name: 'get_weather' }, type: 'function', id: 'call_9' }] };
    const next = kv.admit({ ...ask, messages: [...ask.messages, resent, { role: 'tool', content: '21 C' }] }, 0, 10);
    assert.ok(next !== undefined);
    assert.ok(next.cachedTokens >= first.promptTokens + 64, `cached ${next.cachedTokens} of prompt ${first.promptTokens} + tool call`);
    assert.match(renderPrompt(ask) ?? '', /^<\|im_start\|>system\n# Tools\n/);
  });

  it('counts queries and hits as vLLM does: prompt tokens, whole blocks, never the last token', () => {
    const kv = engine();
    const prompt = { model: MODEL, prompt: 'p'.repeat(16 * 4 * 8) }; // exactly 8 blocks of 16 pseudo-tokens
    kv.finish(kv.admit(prompt, 0, 0) as NonNullable<ReturnType<EngineKv['admit']>>, undefined);
    assert.deepEqual([kv.queriedTokens, kv.hitTokens], [128, 0]);
    assert.equal(kv.cachedTokens(prompt), 7 * 16, 'the block holding the last token is recomputed');
    kv.finish(kv.admit(prompt, 0, 0) as NonNullable<ReturnType<EngineKv['admit']>>, undefined);
    assert.deepEqual([kv.queriedTokens, kv.hitTokens], [256, 112]);
  });

  it('delays the first token by uncached tokens ÷ prefill rate, not by cached ones', () => {
    const clock = fakeClock();
    const kv = engine({ clock: clock.now });
    const base = chat({ role: 'system', content: SYSTEM }, { role: 'user', content: 'q' });
    const cold = kv.admit(base, 1000, 0);
    assert.ok(cold !== undefined);
    assert.equal(cold.prefillMs, cold.promptTokens, 'every token computed at 1000 tokens/s: 1 ms each');
    clock.advance(cold.prefillMs);
    kv.finish(cold, undefined);
    const warm = kv.admit(base, 1000, 0);
    assert.ok(warm !== undefined);
    assert.equal(warm.prefillMs, warm.promptTokens - warm.cachedTokens);
    assert.ok(warm.prefillMs <= 16, `a repeat computes at most its last block, took ${warm.prefillMs} ms`);
    clock.advance(warm.prefillMs);
    kv.finish(warm, undefined);
    const longer = kv.admit(chat({ role: 'system', content: SYSTEM }, { role: 'user', content: 'q'.repeat(4000) }), 1000, 0);
    assert.ok(longer !== undefined);
    // The prompts part inside the user message; the block holding that point is recomputed.
    assert.ok(longer.cachedTokens >= cold.promptTokens - 32, `cached ${longer.cachedTokens} of the earlier ${cold.promptTokens}`);
    assert.equal(longer.prefillMs, longer.promptTokens - longer.cachedTokens);
    assert.ok(Math.abs(longer.prefillMs - 1000) <= 40, `only the ~1,000 new tokens cost, took ${longer.prefillMs} ms`);
  });

  it('serialises prefills FIFO per engine, so a miss delays the requests behind it', () => {
    const clock = fakeClock();
    const kv = engine({ clock: clock.now });
    const a = kv.admit({ model: MODEL, prompt: 'a'.repeat(4000) }, 1000, 0);
    const b = kv.admit({ model: MODEL, prompt: 'b'.repeat(400) }, 1000, 0);
    assert.ok(a !== undefined && b !== undefined);
    assert.equal(a.prefillMs, 1000);
    assert.equal(b.prefillMs, 1000 + 100, 'b waits for a, then computes its own 100 tokens');
    clock.advance(2000);
    const c = kv.admit({ model: MODEL, prompt: 'c'.repeat(400) }, 1000, 0);
    assert.equal(c?.prefillMs, 100, 'an idle lane starts at once');
  });

  it('does not reuse a prefix whose prefill is still running', () => {
    const clock = fakeClock();
    const kv = engine({ clock: clock.now });
    const body = { model: MODEL, prompt: SYSTEM };
    const first = kv.admit(body, 1000, 0);
    assert.ok(first !== undefined);
    assert.equal(kv.cachedTokens(body), 0);
    clock.advance(first.prefillMs);
    assert.ok(kv.cachedTokens(body) > 0);
  });

  it('answers cachedTokens without touching counters or recency', () => {
    const kv = engine({ blocks: 150 });
    const a = { model: MODEL, prompt: `A${SYSTEM}` }; // 60 blocks each: the third evicts 30
    const b = { model: MODEL, prompt: `B${SYSTEM}` };
    kv.finish(kv.admit(a, 0, 0) as NonNullable<ReturnType<EngineKv['admit']>>, undefined);
    kv.finish(kv.admit(b, 0, 0) as NonNullable<ReturnType<EngineKv['admit']>>, undefined);
    const counters = [kv.queriedTokens, kv.hitTokens];
    for (let i = 0; i < 5; i++) assert.ok(kv.cachedTokens(a) > 0);
    assert.deepEqual([kv.queriedTokens, kv.hitTokens], counters);
    kv.finish(kv.admit({ model: MODEL, prompt: `C${SYSTEM}` }, 0, 0) as NonNullable<ReturnType<EngineKv['admit']>>, undefined);
    assert.ok(kv.cachedTokens(a) < kv.cachedTokens(b), 'A was still the least recently used: asking about it did not refresh it');
    assert.ok(kv.cachedTokens(a) > 0, 'A lost only its tail');
    assert.ok(kv.usedBlocks <= 150);
  });

  it('holds nothing for another model, and pins running requests in kv usage', () => {
    const kv = engine({ blocks: 1000 });
    assert.equal(kv.cachedTokens({ model: 'other', prompt: SYSTEM }), 0);
    const running = kv.admit({ model: MODEL, prompt: SYSTEM }, 0, 100);
    assert.ok(running !== undefined);
    assert.equal(kv.usage, Math.ceil((running.promptTokens + 100) / 16) / 1000);
    kv.finish(running, 'done');
    assert.equal(kv.usage, 0);
    kv.reset();
    assert.equal(kv.cachedTokens({ model: MODEL, prompt: SYSTEM }), 0);
  });
});

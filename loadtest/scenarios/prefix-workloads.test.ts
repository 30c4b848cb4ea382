import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { seededRng } from '../sim/random.ts';
import { BYTES_PER_TOKEN, standInReplies, text, turnBody, turnMessages, warmupMsFor, workload, WORKLOAD_NAMES, type ChatMessage } from './prefix-workloads.ts';

const tokens = (s: string) => Buffer.byteLength(s) / BYTES_PER_TOKEN;

describe('prefix workloads', () => {
  it('are the same for the same seed and index, and differ for another seed or index', () => {
    for (const name of WORKLOAD_NAMES) {
      const messages = (seed: number, index: number) => {
        const script = workload(name, seed).conversation(index);
        return turnMessages(script, script.turns - 1, standInReplies(seed, index, script.turns - 1, 28));
      };
      assert.deepEqual(messages(1, 3), messages(1, 3), name);
      assert.notDeepEqual(messages(1, 3), messages(2, 3), name);
      assert.notDeepEqual(messages(1, 3), messages(1, 4), name);
    }
  });

  it('text() is about the asked size in 4-byte tokens, and ASCII', () => {
    const random = seededRng(5);
    for (const size of [1, 60, 1_200, 6_000]) {
      const t = text(random, size);
      assert.equal(Buffer.byteLength(t), t.length);
      assert.ok(Math.abs(tokens(t) - size) <= 1, `${tokens(t)} tokens for ${size}`);
    }
  });

  it('A: keyless turns whose history only grows, with the replies the client read, and think time between them', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.nat(10_000), (seed, index) => {
        const script = workload('A', seed).conversation(index);
        assert.ok(script.turns >= 8 && script.turns <= 16);
        const replies = Array.from({ length: script.turns }, (_, t) => `reply ${t}`);
        let previous: ChatMessage[] | undefined;
        for (let turn = 0; turn < script.turns; turn++) {
          const body = JSON.parse(turnBody('m', 16, script, turn, replies.slice(0, turn))) as Record<string, unknown>;
          assert.deepEqual(Object.keys(body).sort(), ['max_tokens', 'messages', 'model', 'stream']);
          const messages = body['messages'] as ChatMessage[];
          if (previous !== undefined) {
            // What a prefix cache can reuse: the last request, then the reply it got, then one new question.
            assert.deepEqual(messages.slice(0, previous.length), previous);
            assert.deepEqual(messages.slice(previous.length), [{ role: 'assistant', content: `reply ${turn - 1}` }, { role: 'user', content: script.userMessage(turn) }]);
            assert.ok(script.thinkMs(turn) >= 0 && script.thinkMs(turn) <= 4_000);
          }
          previous = messages;
        }
      }),
      { numRuns: 50 },
    );
  });

  it('A: conversations share only the system prompt; the first message is their own', () => {
    const a = workload('A', 1);
    const [x, y] = [a.conversation(0), a.conversation(1)];
    assert.deepEqual(x.opening, y.opening);
    assert.ok(tokens(x.opening[0]?.content ?? '') > 200);
    assert.notEqual(x.userMessage(0).slice(0, 64), y.userMessage(0).slice(0, 64));
    assert.ok(Math.abs(tokens(x.userMessage(0)) - 800) <= 1);
  });

  it('B: the first 150 users visit every document once, later users pick among the same 150', () => {
    const b = workload('B', 1);
    const documentOf = (i: number) => b.conversation(i).opening[0]?.content ?? '';
    const first = new Set(Array.from({ length: 150 }, (_, i) => documentOf(i)));
    assert.equal(first.size, 150);
    for (let i = 150; i < 400; i++) assert.ok(first.has(documentOf(i)));
    assert.ok(Math.abs(tokens(documentOf(0)) - 6_000) <= 1);
    assert.ok(Math.abs(tokens(b.conversation(0).userMessage(0)) - 1_200) <= 1);
    assert.notEqual(b.conversation(0).userMessage(0), b.conversation(150).userMessage(0));
    // 2 requests per document at 10 req/s: 30 s, more than a 20 s floor.
    assert.equal(warmupMsFor(b, 20_000, 10), 30_000);
    assert.equal(warmupMsFor(workload('C', 1), 20_000, 10), 20_000);
  });

  it('C shares one long system prompt; D shares nothing', () => {
    const c = workload('C', 1);
    assert.deepEqual(c.conversation(0).opening, c.conversation(9).opening);
    assert.ok(tokens(c.conversation(0).opening[0]?.content ?? '') >= 8_000);
    const d = workload('D', 1);
    const prompts = Array.from({ length: 50 }, (_, i) => d.conversation(i).userMessage(0));
    assert.equal(new Set(prompts.map((p) => p.slice(0, 32))).size, 50);
    assert.ok(prompts.every((p) => d.conversation(0).opening.length === 0 && Math.abs(tokens(p) - 1_800) <= 1));
  });
});

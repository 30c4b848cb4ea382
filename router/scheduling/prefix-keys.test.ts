import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { hashString, mix32 } from '../load/hash.ts';
import { BLOCK_BYTES, createPrefixKeys, GROUP_BYTES, MAX_BLOCKS, prefixKeys, type PrefixKeys, type PromptKind } from './prefix-keys.ts';

interface Message {
  role: string;
  content: string;
}

/** The canonical prefix of a compact JSON value (what the body scanner keeps), cut at `cap` bytes. */
function canonical(value: unknown, cap = 64 * 1024): { prefix: Buffer; truncated: boolean } {
  const bytes = Buffer.from(JSON.stringify(value));
  return { prefix: bytes.subarray(0, cap), truncated: bytes.length > cap };
}

function keysOf(messages: unknown, options: { model?: string; salt?: string; kind?: PromptKind; cap?: number } = {}): PrefixKeys {
  const { prefix, truncated } = canonical(messages, options.cap);
  return prefixKeys(options.model ?? 'llama', options.salt, options.kind ?? 'chat', prefix, truncated);
}

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(' ');
const SYSTEM: Message = { role: 'system', content: 'You are a careful assistant. '.repeat(400) }; // ~11.6 KiB
const SHORT_SYSTEM: Message = { role: 'system', content: 'Be brief.' };

/** The turns of one conversation: [system, user1], then [system, user1, assistant1, user2], ... */
function turns(system: Message, firstUser: string, count: number): Message[][] {
  const out: Message[][] = [];
  const history: Message[] = [system, { role: 'user', content: firstUser }];
  for (let t = 0; t < count; t++) {
    out.push([...history]);
    history.push({ role: 'assistant', content: words(60, `answer${t}-`) }, { role: 'user', content: words(20, `question${t}-`) });
  }
  return out;
}

const blocksOf = (keys: PrefixKeys) => [...keys.blocks.subarray(0, keys.blockCount)];

describe('prefix keys', () => {
  it("gives every turn of one conversation the same conversation and group keys, and a growing history", () => {
    for (const system of [SYSTEM, SHORT_SYSTEM]) {
      const keys = turns(system, 'Plan a trip to Lisbon.', 6).map((messages) => keysOf(messages));
      for (const k of keys) {
        assert.equal(k.conversation, keys[0]?.conversation);
        assert.equal(k.group, keys[0]?.group);
      }
      for (let t = 1; t < keys.length; t++) assert.ok((keys[t]?.historyTokens ?? 0) > (keys[t - 1]?.historyTokens ?? 0));
    }
  });

  it('counts as history the canonical bytes through the last assistant message (/4); none for a first turn or a completion', () => {
    const messages = turns(SHORT_SYSTEM, 'hi', 3)[2] as Message[];
    const through = Buffer.byteLength(JSON.stringify(messages.slice(0, -1))) - 1; // "[" + elements through the last assistant one
    assert.equal(keysOf(messages).historyTokens, Math.floor(through / 4));
    assert.equal(keysOf(turns(SYSTEM, 'hi', 1)[0] as Message[]).historyTokens, 0, 'a system prompt is not the conversation\'s history');
    assert.equal(keysOf([{ role: 'user', content: 'x'.repeat(4000) }]).historyTokens, 0);
    assert.equal(keysOf('x'.repeat(4000), { kind: 'completion' }).historyTokens, 0);
  });

  it('counts as opening the canonical bytes before the first user message (/4); none when the user speaks first or for a completion', () => {
    const messages = [SYSTEM, { role: 'user', content: 'first question' }];
    const before = Buffer.byteLength(JSON.stringify([SYSTEM])) - 1; // "[" and the system element, up to the comma
    assert.equal(keysOf(messages).openingTokens, Math.floor((before + 1) / 4));
    // Later turns keep the opening of the first: only what precedes the first user message counts.
    assert.equal(keysOf(turns(SYSTEM, 'hi', 3)[2] as Message[]).openingTokens, keysOf(messages).openingTokens);
    assert.equal(keysOf([{ role: 'user', content: 'x'.repeat(40_000) }, SYSTEM]).openingTokens, 0);
    assert.equal(keysOf('x'.repeat(40_000), { kind: 'completion' }).openingTokens, 0);
    // No user message within the scanned 64 KiB: all of it opens the prompt.
    const long = keysOf([{ role: 'system', content: 'y'.repeat(100_000) }, { role: 'user', content: 'q' }], { cap: 200_000 });
    assert.equal(long.openingTokens, (64 * 1024) / 4);
    // A user message too long to end within the prefix still ends the opening where it begins.
    assert.equal(keysOf([SHORT_SYSTEM, { role: 'user', content: 'z'.repeat(100_000) }]).openingTokens, Math.floor((Buffer.byteLength(JSON.stringify([SHORT_SYSTEM])) - 1 + 1) / 4));
  });

  it('puts conversations that share a system prompt of 8 KiB or more in one group, each its own conversation', () => {
    const a = keysOf([SYSTEM, { role: 'user', content: 'first question' }]);
    const b = keysOf([SYSTEM, { role: 'user', content: 'another question' }]);
    assert.equal(a.group, b.group);
    assert.notEqual(a.conversation, b.conversation);
    // A short shared system prompt forms no group: the group key then is the conversation key.
    const c = keysOf([SHORT_SYSTEM, { role: 'user', content: 'first question' }]);
    const d = keysOf([SHORT_SYSTEM, { role: 'user', content: 'another question' }]);
    assert.notEqual(c.group, d.group);
    assert.equal(c.group, c.conversation);
    // The group is the first 8 KiB exactly: conversations that part at 7.9 KiB are two groups.
    const opening = { role: 'system', content: 's'.repeat(8 * 1024 - 200) };
    assert.notEqual(keysOf([opening, { role: 'user', content: 'x'.repeat(300) }]).group, keysOf([opening, { role: 'user', content: 'y'.repeat(300) }]).group);
  });

  it('keys by model and cache salt: the engines never share cache blocks across either', () => {
    const messages = turns(SYSTEM, 'hello', 2)[1];
    const base = keysOf(messages);
    for (const other of [keysOf(messages, { model: 'llama-2' }), keysOf(messages, { salt: 'tenant-a' }), keysOf(messages, { salt: 'tenant-b' })]) {
      assert.notEqual(other.conversation, base.conversation);
      assert.notEqual(other.group, base.group);
      assert.equal(other.blockCount, base.blockCount);
      for (let i = 0; i < base.blockCount; i++) assert.notEqual(other.blocks[i], base.blocks[i]);
    }
    assert.deepEqual(blocksOf(keysOf(messages, { salt: 'tenant-a' })), blocksOf(keysOf(messages, { salt: 'tenant-a' })));
  });

  it('finds the first user message by its role wherever the key sits, not by position or nested text', () => {
    const tools = { role: 'system', content: 'x', tools: [{ role: 'user', content: 'nested, not a message' }] };
    const user = { content: 'the real first question', role: 'user' };
    const base = keysOf([tools, user, { role: 'assistant', content: 'a' }, { role: 'user', content: 'q2' }]);
    // Same through the first user message: same conversation, whatever follows.
    assert.equal(keysOf([tools, user]).conversation, base.conversation);
    // A different first user message: another conversation.
    assert.notEqual(keysOf([tools, { content: 'another first question', role: 'user' }]).conversation, base.conversation);
    // Responses API items carry a type too.
    const item = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello "quoted" \\ text' }] };
    assert.equal(keysOf([item, { type: 'function_call_output', call_id: 'c1', output: '{}' }]).conversation, keysOf([item]).conversation);
  });

  it('keeps the conversation key when the prefix is cut inside the first user message, and counts the cut prefix as history', () => {
    const long = { role: 'user', content: words(30_000, 'doc') }; // ~200 KB
    const cap = 64 * 1024;
    const first = keysOf([SHORT_SYSTEM, long], { cap });
    const later = keysOf([SHORT_SYSTEM, long, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'and?' }], { cap });
    assert.equal(first.conversation, later.conversation);
    assert.equal(first.blockCount, MAX_BLOCKS);
    assert.equal(first.historyTokens, cap / 4);
    // Another document of the same opening 8 KiB: same group, another conversation.
    const other = keysOf([SHORT_SYSTEM, { role: 'user', content: `${long.content.slice(0, 40_000)} and then something else ${long.content}` }], { cap });
    assert.equal(other.group, first.group);
    assert.notEqual(other.conversation, first.conversation);
  });

  it('keys a completion prompt by its first 8 KiB: conversation = group', () => {
    const shared = 'Few-shot examples. '.repeat(500); // > 8 KiB
    const a = keysOf(`${shared} Question one?`, { kind: 'completion' });
    const b = keysOf(`${shared} Question two?`, { kind: 'completion' });
    assert.equal(a.conversation, a.group);
    assert.equal(a.group, b.group);
    assert.notEqual(keysOf('short prompt', { kind: 'completion' }).group, keysOf('short prompt!', { kind: 'completion' }).group);
    // A chat prefix that is not a list of messages is keyed as a completion.
    assert.deepEqual(keysOf('plain', { kind: 'chat' }), keysOf('plain', { kind: 'completion' }));
  });

  it('chains block hashes: two prompts share exactly the blocks of their common whole-block prefix (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40_000 }), fc.integer(), fc.nat(40_000), fc.integer({ min: 1, max: 255 }), (length, seed, at, flip) => {
        const bytes = Buffer.alloc(length);
        for (let i = 0, x = seed; i < length; i++) bytes[i] = x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) >>> 24;
        const a = Buffer.from(bytes);
        const b = Buffer.from(bytes);
        const changed = bytes.length === 0 ? -1 : at % bytes.length;
        if (changed >= 0) b[changed] = (b[changed] as number) ^ flip;
        const ka = prefixKeys('m', undefined, 'completion', a, false);
        const kb = prefixKeys('m', undefined, 'completion', b, false);
        assert.equal(ka.blockCount, Math.ceil(Math.min(bytes.length, MAX_BLOCKS * BLOCK_BYTES) / BLOCK_BYTES));
        const common = changed === -1 ? ka.blockCount : Math.min(ka.blockCount, Math.floor(changed / BLOCK_BYTES));
        for (let i = 0; i < ka.blockCount; i++) assert.equal(ka.blocks[i] === kb.blocks[i], i < common, `block ${i}`);
        assert.equal(ka.group === kb.group, changed === -1 || changed >= GROUP_BYTES);
      }),
      { numRuns: 200 },
    );
  });

  it('conversation key = the prefix through the first user message; history = bytes through the last assistant message (property)', () => {
    // Strings with quotes, backslashes and brackets exercise the string tracking both ways.
    const text = fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '{', '}', '[', ']', ',', ':', 'é', '\n'), maxLength: 40 });
    const message = fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'tool', 'user '), content: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 })) });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 8 }), fc.array(message, { maxLength: 4 }), (messages, more) => {
        const keys = keysOf(messages);
        const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
        const through = lastAssistant === -1 ? 0 : Buffer.byteLength(JSON.stringify(messages.slice(0, lastAssistant + 1))) - 1;
        assert.equal(keys.historyTokens, Math.floor(through / 4));
        const firstUser = messages.findIndex((m) => m.role === 'user');
        if (firstUser === -1) return;
        // Whatever follows the first user message, the conversation stays.
        assert.equal(keysOf([...messages.slice(0, firstUser + 1), ...more]).conversation, keys.conversation);
        // The conversation key is the chain over '[' + the messages through it, as a completion of that text would hash its first 8 KiB.
        const span = JSON.stringify(messages.slice(0, firstUser + 1)).slice(0, -1);
        assert.equal(keys.conversation, prefixKeys('llama', undefined, 'completion', Buffer.from(span), false).conversation);
      }),
      { numRuns: 1_000 },
    );
  });

  it('sizes fresh keys to the blocks the prompt fills, with the same keys as a full-size object', () => {
    for (const bytes of [0, 1, BLOCK_BYTES, BLOCK_BYTES + 1, 16 * BLOCK_BYTES + 7, 40 * BLOCK_BYTES, 80 * BLOCK_BYTES]) {
      const prompt = Buffer.from('x'.repeat(bytes));
      const fresh = prefixKeys('llama', undefined, 'completion', prompt, false);
      const full = prefixKeys('llama', undefined, 'completion', prompt, false, createPrefixKeys());
      assert.equal(fresh.blocks.length, Math.min(MAX_BLOCKS, Math.ceil(bytes / BLOCK_BYTES)), `${bytes} bytes`);
      assert.deepEqual({ ...fresh, blocks: blocksOf(fresh) }, { ...full, blocks: blocksOf(full) }, `${bytes} bytes`);
    }
  });

  it('writes into the caller-owned keys object, overwriting every field', () => {
    const into = createPrefixKeys();
    const long = keysOf(turns(SYSTEM, 'q', 4)[3]);
    const reused = prefixKeys('llama', undefined, 'chat', canonical(turns(SYSTEM, 'q', 4)[3]).prefix, false, into);
    assert.equal(reused, into);
    assert.deepEqual({ ...reused, blocks: blocksOf(reused) }, { ...long, blocks: blocksOf(long) });
    const short = prefixKeys('llama', undefined, 'chat', Buffer.from('[{"role":"user","content":"hi"}]'), false, into);
    assert.equal(short.blockCount, 1);
    assert.equal(short.historyTokens, 0);
    assert.equal(short.conversation, short.group);
  });

  it('spreads conversations evenly over engines by rendezvous weight', () => {
    const engines = Array.from({ length: 8 }, (_, i) => hashString(`pod-${i}`));
    const homes = new Array<number>(engines.length).fill(0);
    const n = 16_000;
    for (let c = 0; c < n; c++) {
      // Near-identical conversations: one system prompt, user messages that differ in one digit.
      const { conversation } = keysOf([SHORT_SYSTEM, { role: 'user', content: `question number ${c}` }]);
      let best = 0;
      for (let e = 1; e < engines.length; e++) if (mix32(conversation, engines[e] as number) > mix32(conversation, engines[best] as number)) best = e;
      homes[best] = (homes[best] as number) + 1;
    }
    const expected = n / engines.length;
    const chiSquare = homes.reduce((sum, h) => sum + (h - expected) ** 2 / expected, 0);
    assert.ok(chiSquare < 24.3, `chi-square ${chiSquare.toFixed(1)} over 7 degrees of freedom (p = 0.001): ${homes.join(' ')}`);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PrefixCache, promptBlocks } from './prefix-cache.ts';

const turn = (...contents: string[]) => promptBlocks({ messages: contents.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content })) });

describe('simulated prefix cache', () => {
  it("counts a conversation's earlier turns as hits on the engine that served them", () => {
    const cache = new PrefixCache();
    cache.lookup(turn('a'.repeat(100)));
    assert.equal(cache.hitTokens, 0, 'a first prompt finds nothing');
    const queriedFirst = cache.queriedTokens;
    cache.lookup(turn('a'.repeat(100), 'b'.repeat(40), 'c'.repeat(40)));
    assert.equal(cache.hitTokens, queriedFirst, 'the first turn is cached, the new messages are not');
    assert.ok(cache.queriedTokens > 2 * queriedFirst);
  });

  it('stops hitting at the first block that differs, even when later blocks were seen', () => {
    const cache = new PrefixCache();
    cache.lookup(turn('x', 'same tail'));
    const before = cache.hitTokens;
    cache.lookup(turn('y', 'same tail'));
    assert.equal(cache.hitTokens, before);
  });

  it('keys a message by everything in it: role, content and any other field', () => {
    const blocks = promptBlocks({
      messages: [
        { role: 'user', content: 'same' },
        { role: 'assistant', content: 'same' },
        { role: 'user', content: 'same', name: 'a' },
        { role: 'user', content: [{ type: 'text', text: 'same' }] },
      ],
    });
    assert.equal(new Set(blocks).size, 4, JSON.stringify(blocks));
    assert.deepEqual(promptBlocks({ messages: [{ role: 'user', content: 'same' }] }), [blocks[0]]);
  });

  it('treats a completion prompt as one block', () => {
    assert.deepEqual(promptBlocks({ prompt: 'hello' }), ['hello']);
    assert.deepEqual(promptBlocks({}), []);
  });
});

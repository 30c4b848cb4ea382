import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerLength, promptTokens, usageOf, wantsStreamUsage } from './token-budget.ts';

describe('answer length: max_tokens and ignore_eos as vLLM treats them', () => {
  it('ends on its own without a limit, or when the limit is above the natural length', () => {
    assert.deepEqual(answerLength(16, {}), { tokens: 16, cut: false });
    assert.deepEqual(answerLength(16, { max_tokens: 100 }), { tokens: 16, cut: false });
  });

  it('is cut at max_tokens below the natural length, and runs to it with ignore_eos', () => {
    assert.deepEqual(answerLength(16, { max_tokens: 4 }), { tokens: 4, cut: true });
    assert.deepEqual(answerLength(16, { max_tokens: 100, ignore_eos: true }), { tokens: 100, cut: true });
    assert.deepEqual(answerLength(16, { max_tokens: 100, ignore_eos: 'yes' }), { tokens: 16, cut: false }, 'only a JSON true turns EOS off');
  });

  it('takes max_completion_tokens over max_tokens, ignores unusable limits and caps at max_model_len', () => {
    assert.deepEqual(answerLength(16, { max_completion_tokens: 3, max_tokens: 10 }), { tokens: 3, cut: true });
    for (const max_tokens of [0, -1, 2.5, '8', null]) assert.deepEqual(answerLength(16, { max_tokens }), { tokens: 16, cut: false }, String(max_tokens));
    assert.deepEqual(answerLength(16, { max_tokens: 1e9, ignore_eos: true }), { tokens: 8192, cut: true });
  });
});

describe('usage', () => {
  it('counts prompt pseudo-tokens from message contents or the prompt, 4 UTF-8 bytes each', () => {
    assert.equal(promptTokens({ messages: [{ role: 'user', content: 'abcdefgh' }, { role: 'assistant', content: 'é' }] }), 3);
    assert.equal(promptTokens({ prompt: 'abcde' }), 2);
    assert.equal(promptTokens({}), 0);
  });

  it('asks for a stream usage chunk only with stream_options.include_usage true', () => {
    assert.equal(wantsStreamUsage({ stream_options: { include_usage: true } }), true);
    assert.equal(wantsStreamUsage({ stream_options: { include_usage: false } }), false);
    assert.equal(wantsStreamUsage({ stream_options: null }), false);
    assert.deepEqual(usageOf(5, 7), { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 });
  });
});

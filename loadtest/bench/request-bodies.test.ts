import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestShape, RequestTemplate } from './load-spec.ts';
import { CHARS_PER_TOKEN, RequestBodies } from './request-bodies.ts';

const PLAIN: RequestTemplate = { path: '/v1/chat/completions', model: 'm', stream: true, tools: false, promptBytes: 0, headers: {}, users: 0, checkIds: true };
const SHAPE: RequestShape = { promptTokens: { min: 50, max: 100 }, outputTokens: { min: 10, max: 20 }, ignoreEos: true, turns: 1 };

interface Body {
  model: string;
  stream: boolean;
  max_tokens?: number;
  ignore_eos?: boolean;
  stream_options?: { include_usage: boolean };
  messages: { role: string; content: string }[];
}

const parse = (body: string) => JSON.parse(body) as Body;

describe('request bodies', () => {
  it('a plain template reuses one body per stream mode, with no token fields', () => {
    const bodies = new RequestBodies(PLAIN, 1);
    const a = bodies.draft('r-1', true, undefined);
    assert.equal(a.body, bodies.draft('r-2', true, undefined).body);
    assert.deepEqual(Object.keys(parse(a.body)).sort(), ['messages', 'model', 'stream']);
    assert.equal(parse(bodies.draft('r-3', false, undefined).body).stream, false);
    assert.equal(a.maxTokens, undefined);
  });

  it('a shaped template draws lengths in range, asks max_tokens, ignore_eos and (streamed only) usage, and opens every prompt differently', () => {
    const bodies = new RequestBodies({ ...PLAIN, shape: SHAPE }, 1);
    const drafts = Array.from({ length: 200 }, (_, i) => bodies.draft(`r-${i}`, i % 2 === 0, undefined));
    const lengths = new Set<number>();
    for (const [i, draft] of drafts.entries()) {
      const body = parse(draft.body);
      assert.ok(body.max_tokens !== undefined && body.max_tokens >= 10 && body.max_tokens <= 20);
      assert.equal(body.max_tokens, draft.maxTokens);
      assert.equal(body.ignore_eos, true);
      assert.deepEqual(body.stream_options, i % 2 === 0 ? { include_usage: true } : undefined);
      const content = body.messages[0]?.content ?? '';
      assert.ok(content.length >= 50 * CHARS_PER_TOKEN && content.length <= 100 * CHARS_PER_TOKEN, `${content.length} characters`);
      assert.ok(content.startsWith(`Request r-${i}. `), 'the request id opens the prompt: no shared prefix');
      assert.equal(draft.promptTokens, Math.ceil(content.length / CHARS_PER_TOKEN));
      lengths.add(body.max_tokens);
    }
    assert.equal(lengths.size, 11, 'every length in 10-20 drawn');
    assert.equal(parse(new RequestBodies({ ...PLAIN, shape: { ...SHAPE, ignoreEos: false } }, 1).draft('r', true, 0).body).ignore_eos, undefined);
  });

  it('a conversation resends its history with the answers and starts over after its last turn', () => {
    const bodies = new RequestBodies({ ...PLAIN, users: 2, shape: { ...SHAPE, turns: 3 } }, 1);
    assert.equal(bodies.keepsAnswers, true);
    const first = bodies.draft('a', true, 0);
    assert.equal(first.turn?.index, 0);
    bodies.answered(first.turn, 'answer one');
    const second = bodies.draft('b', true, 0);
    const sent = parse(second.body).messages;
    assert.deepEqual(sent.map((m) => m.role), ['user', 'assistant', 'user']);
    assert.equal(sent[1]?.content, 'answer one');
    assert.ok(sent[2]?.content.startsWith('Request b. '));
    assert.equal(parse(bodies.draft('other', true, 1).body).messages.length, 1, 'another session has its own history');
    bodies.answered(second.turn!, 'answer two');
    const third = bodies.draft('c', true, 0);
    assert.equal(parse(third.body).messages.length, 5);
    bodies.answered(third.turn!, 'answer three');
    assert.equal(parse(bodies.draft('d', true, 0).body).messages.length, 1, 'three turns done: a new conversation');
    bodies.answered(second.turn!, 'late');
    assert.equal(parse(bodies.draft('e', true, 0).body).messages.length, 1, 'an answer to the abandoned conversation is dropped');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ResponseStore, type ResponseOpening, type ResponseTurn } from './response-store.ts';

function opened(opening: ResponseOpening): ResponseTurn {
  assert.ok(opening.ok, `expected the request to open, got ${JSON.stringify(opening)}`);
  return opening.turn;
}

describe('ResponseStore', () => {
  it('turns a string input into one user message, with instructions as the system message', () => {
    const turn = opened(new ResponseStore().open({ model: 'm', input: 'hi', instructions: 'be brief' }));
    assert.deepEqual(turn.messages, [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    assert.deepEqual(turn.prompt, { model: 'm', messages: turn.messages });
    assert.match(turn.id, /^resp_[0-9a-f]{32}$/);
    assert.match(turn.messageId, /^msg_[0-9a-f]{32}$/);
    assert.equal(turn.store, true, 'store defaults to true');
    assert.equal(turn.stream, false);
    assert.equal(turn.previousResponseId, null);
  });

  it('keeps role-tagged input items (with or without type "message") and renders other items as their JSON', () => {
    const call = { type: 'function_call_output', call_id: 'c1', output: '42' };
    const turn = opened(
      new ResponseStore().open({
        model: 'm',
        input: [{ role: 'developer', content: 'rules' }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'q' }] }, call],
      }),
    );
    assert.deepEqual(turn.messages, [
      { role: 'developer', content: 'rules' },
      { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { role: 'user', content: JSON.stringify(call) },
    ]);
  });

  it('continues a stored response: its messages, its output as the assistant turn, then the new input', () => {
    const store = new ResponseStore();
    const first = opened(store.open({ model: 'm', input: 'one', instructions: 'sys' }));
    store.save(first, 'answer one');
    const second = opened(store.open({ model: 'm', input: 'two', previous_response_id: first.id }));
    assert.equal(second.previousResponseId, first.id);
    assert.deepEqual(second.messages, [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'answer one' },
      { role: 'user', content: 'two' },
    ]);
    store.save(second, 'answer two');
    const third = opened(store.open({ model: 'm', input: 'three', previous_response_id: second.id }));
    assert.deepEqual(
      third.messages.map((m) => m.content),
      ['sys', 'one', 'answer one', 'two', 'answer two', 'three'],
    );
  });

  it("answers an unknown previous response with vLLM's 404", () => {
    const opening = new ResponseStore().open({ model: 'm', input: 'x', previous_response_id: 'resp_nope' });
    assert.deepEqual(opening, {
      ok: false,
      status: 404,
      error: { error: { message: "Response with id 'resp_nope' not found.", type: 'invalid_request_error', param: 'response_id', code: 404 } },
    });
  });

  it('refuses a body without a usable input, or with a non-string previous_response_id, with 400', () => {
    const store = new ResponseStore();
    for (const body of [{ model: 'm' }, { model: 'm', input: 3 }, { model: 'm', input: ['bare string item'] }, { model: 'm', input: 'x', previous_response_id: 7 }]) {
      const opening = store.open(body);
      assert.equal(opening.ok, false, JSON.stringify(body));
      assert.equal(!opening.ok && opening.status, 400);
    }
  });

  it('does not store a response that asked not to be', () => {
    const store = new ResponseStore();
    const turn = opened(store.open({ model: 'm', input: 'x', store: false }));
    store.save(turn, 'out');
    assert.equal(store.has(turn.id), false);
    assert.equal(store.size, 0);
  });

  it('keeps at most its limit, dropping the oldest stored first (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 30 }), (limit, count) => {
        const store = new ResponseStore(limit);
        const ids: string[] = [];
        for (let i = 0; i < count; i++) {
          const turn = opened(store.open({ model: 'm', input: `q${i}` }));
          store.save(turn, `a${i}`);
          ids.push(turn.id);
        }
        assert.equal(store.size, Math.min(limit, count));
        ids.forEach((id, i) => assert.equal(store.has(id), i >= count - limit, `response ${i} of ${count}, limit ${limit}`));
      }),
    );
  });

  it('rejects a limit below 1', () => {
    assert.throws(() => new ResponseStore(0));
  });
});

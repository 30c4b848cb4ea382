import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatCompletion, chatEvents, offeredTools } from './answers.ts';
import { DEFAULT_KNOBS } from './knobs.ts';

interface Call {
  id: string;
  name: string;
  arguments: string;
}

/** Accumulates streamed tool-call deltas by `index`, as the OpenAI SDKs do. */
function accumulate(events: readonly string[]): Call[] {
  const calls: Call[] = [];
  for (const event of events) {
    const delta = (JSON.parse(event.slice('data: '.length)) as { choices: { delta: { tool_calls?: { index: number; id?: string; function: { name?: string; arguments?: string } }[] } }[] }).choices[0]?.delta;
    for (const part of delta?.tool_calls ?? []) {
      const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
      call.id ||= part.id ?? '';
      call.name ||= part.function.name ?? '';
      call.arguments += part.function.arguments ?? '';
    }
  }
  return calls;
}

describe('simulated tool calls', () => {
  const knobs = { ...DEFAULT_KNOBS, toolCalls: 3, toolArgsBytes: 200 };

  it('names the offered tools in turn, and none when tool_choice is none', () => {
    assert.deepEqual(offeredTools({ tools: [{ type: 'function', function: { name: 'search' } }, { type: 'function', function: {} }] }), ['search', 'get_weather']);
    assert.equal(offeredTools({ tools: [{ type: 'function', function: { name: 'search' } }], tool_choice: 'none' }), undefined);
    assert.equal(offeredTools({ tools: [] }), undefined);
  });

  it('streams several calls interleaved by index that accumulate to the non-streamed answer', () => {
    const tools = ['search', 'lookup'];
    const events = chatEvents('m', 'chatcmpl-1', knobs, tools, 7);
    const streamed = accumulate(events);
    const whole = chatCompletion('m', 'chatcmpl-1', knobs, tools, 7) as { choices: { message: { tool_calls: { id: string; function: { name: string; arguments: string } }[] } }[] };
    const calls = whole.choices[0]?.message.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
    assert.deepEqual(streamed, calls);
    assert.deepEqual(streamed.map((c) => c.name), ['search', 'lookup', 'search']);
    assert.equal(new Set(streamed.map((c) => c.id)).size, 3);
    for (const call of streamed) assert.equal(typeof (JSON.parse(call.arguments) as { location: string }).location, 'string');
    // Fragments of different calls alternate: a client that appends by position would mix them.
    const indexes = events.flatMap((e) => (e.includes('"arguments":"') && !e.includes('"arguments":""') ? [(/"index":(\d+),"function"/.exec(e) ?? [])[1]] : []));
    assert.deepEqual(indexes.slice(0, 3), ['0', '1', '2']);
  });
});

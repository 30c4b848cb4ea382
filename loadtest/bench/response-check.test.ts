import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkJsonResponse, readJsonResponse, StreamCheck, type Expectation } from './response-check.ts';

const TOOLS: Expectation = { toolCall: true, idSuffix: 'req-1' };

function event(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

function toolStream(id: string, args: string): string {
  const parts = [event({ id, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }), event({ id, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] } }] })];
  for (let i = 0; i < args.length; i += 7) parts.push(event({ id, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 7) } }] } }] }));
  parts.push(event({ id, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }), 'data: [DONE]\n\n');
  return parts.join('');
}

function check(text: string, expect: Expectation, splitAt: number[] = []) {
  const bytes = Buffer.from(text);
  const checker = new StreamCheck(expect);
  let from = 0;
  for (const [i, at] of [...splitAt, bytes.length].entries()) {
    checker.push(bytes.subarray(from, at), i);
    from = at;
  }
  return checker.finish();
}

const ARGS = JSON.stringify({ city: 'Zürich 日本語 🚀', notes: 'x'.repeat(1100) });

test('a well-formed tool-call stream passes however its bytes are split', () => {
  const text = toolStream('chatcmpl-req-1', ARGS);
  const length = Buffer.byteLength(text);
  for (let at = 1; at < length; at += 13) {
    const verdict = check(text, TOOLS, [at]);
    assert.equal(verdict.problem, undefined, `split at ${at}`);
  }
  // The first event (role, empty content) is not a token; the second (tool call name) is.
  const secondEventEnd = Buffer.byteLength(text.split('\n\n').slice(0, 2).join('\n\n')) + 2;
  const verdict = check(text, TOOLS, [secondEventEnd - 1, secondEventEnd]);
  assert.equal(verdict.firstTokenAt, 1, 'first token time is when the first content event completed');
  assert.ok(verdict.tokenGaps.length > 100);
});

test('corruption is named: interleaving, broken arguments, missing name, framing, [DONE]', () => {
  const good = toolStream('chatcmpl-req-1', ARGS);
  const other = toolStream('chatcmpl-req-2', ARGS);
  const cases: [string, string, RegExp][] = [
    ['interleaved event', good.replace('data: [DONE]\n\n', '') + other.split('\n\n')[2] + '\n\ndata: [DONE]\n\n', /interleaved/],
    ['arguments cut', toolStream('chatcmpl-req-1', ARGS.slice(0, -3)), /arguments do not parse/],
    ['no name', good.replace('"name":"get_weather"', '"name":""'), /no function name/],
    ['no [DONE]', good.replace('data: [DONE]\n\n', ''), /without \[DONE\]/],
    ['cut mid-event', good.slice(0, 200), /ended inside an event/],
    ['not JSON', good.replace('{"id"', '{id'), /not JSON/],
    ['not SSE', good.replace('data: {', 'dta: {'), /malformed SSE/],
    ['after [DONE]', `${good}${event({ id: 'chatcmpl-req-1', choices: [] })}`, /after \[DONE\]/],
    ['error event', good.replace('data: [DONE]', `data: ${JSON.stringify({ error: { message: 'engine died' } })}`), /error event/],
  ];
  for (const [name, text, problem] of cases) assert.match(check(text, TOOLS).problem ?? 'passed', problem, name);
  assert.match(check(event({ id: 'chatcmpl-req-1', choices: [{ delta: { content: 'hi' } }] }) + 'data: [DONE]\n\n', TOOLS).problem ?? 'passed', /no tool call/);
});

test('keep-alive comments are allowed and the id check can be turned off', () => {
  const text = `: ping\n\n${event({ id: 'x', choices: [{ delta: { content: 'a' } }] })}data: [DONE]\n\n`;
  assert.equal(check(text, { toolCall: false, idSuffix: undefined }).problem, undefined);
  assert.match(check(text, { toolCall: false, idSuffix: 'req-9' }).problem ?? 'passed', /interleaved/);
});

test('non-streamed bodies: tool call arguments must parse and carry a name', () => {
  const body = (args: string, name = 'get_weather') => JSON.stringify({ id: 'chatcmpl-req-1', choices: [{ message: { tool_calls: [{ function: { name, arguments: args } }] } }] });
  assert.equal(checkJsonResponse(body(ARGS), TOOLS), undefined);
  assert.match(checkJsonResponse(body(ARGS.slice(1)), TOOLS) ?? 'passed', /do not parse/);
  assert.match(checkJsonResponse(body(ARGS, ''), TOOLS) ?? 'passed', /no function name/);
  assert.match(checkJsonResponse(body(ARGS), { toolCall: true, idSuffix: 'req-2' }) ?? 'passed', /does not belong/);
  assert.match(checkJsonResponse('{"id": ', TOOLS) ?? 'passed', /not JSON/);
});

test('the id check is a suffix match, so request 1 cannot pass for request 12', () => {
  const text = `${event({ id: 'chatcmpl-run-12', choices: [{ delta: { content: 'a' } }] })}data: [DONE]\n\n`;
  assert.match(check(text, { toolCall: false, idSuffix: 'run-1' }).problem ?? 'passed', /interleaved/);
  assert.equal(check(text, { toolCall: false, idSuffix: 'run-12' }).problem, undefined);
});

test('usage and text: the usage chunk of a stream (no choices) is read, and the content kept only when asked', () => {
  const text = [
    event({ id: 'chatcmpl-req-1', choices: [{ delta: { role: 'assistant', content: '' } }] }),
    event({ id: 'chatcmpl-req-1', choices: [{ delta: { content: 'Grüezi ' } }] }),
    event({ id: 'chatcmpl-req-1', choices: [{ delta: { content: 'mitenand' } }] }),
    event({ id: 'chatcmpl-req-1', choices: [{ delta: {}, finish_reason: 'length' }] }),
    event({ id: 'chatcmpl-req-1', choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } }),
    'data: [DONE]\n\n',
  ].join('');
  const kept = check(text, { toolCall: false, idSuffix: 'req-1', keepText: true }, [9, 40, 41]);
  assert.equal(kept.problem, undefined);
  assert.equal(kept.events, 2);
  assert.deepEqual(kept.usage, { promptTokens: 12, completionTokens: 2 });
  assert.equal(kept.text, 'Grüezi mitenand');
  assert.equal(check(text, { toolCall: false, idSuffix: 'req-1' }).text, undefined);
  assert.equal(check(`${event({ id: 'x', choices: [{ text: 'a' }] })}data: [DONE]\n\n`, { toolCall: false, idSuffix: undefined }).usage, undefined);
});

test('non-streamed bodies: usage and the generated text are read beside the check', () => {
  const chat = readJsonResponse(JSON.stringify({ id: 'chatcmpl-req-1', choices: [{ message: { content: 'hello' } }], usage: { prompt_tokens: 3, completion_tokens: 1 } }), { toolCall: false, idSuffix: 'req-1' });
  assert.deepEqual(chat, { problem: undefined, usage: { promptTokens: 3, completionTokens: 1 }, text: 'hello' });
  const completion = readJsonResponse(JSON.stringify({ id: 'cmpl-req-1', choices: [{ text: 'once' }] }), { toolCall: false, idSuffix: 'req-2' });
  assert.match(completion.problem ?? 'passed', /does not belong/);
  assert.equal(completion.text, 'once');
  assert.equal(completion.usage, undefined);
});

/**
 * The official `openai` npm SDK against switchyard in front of engine
 * simulators: every API surface an application uses (chat, tools, legacy
 * completions, embeddings, models, the Responses API), the SDK's error
 * classes for switchyard's answers, the SDK's own retry honouring the
 * router's 429 Retry-After, and the SDK's timeout and abort reaching the
 * engine as an abandoned response.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI, { APIConnectionTimeoutError, BadRequestError, NotFoundError } from 'openai';
import { tokenText, toolArguments } from '../../loadtest/sim/content.ts';
import { startFleet, waitFor, type Fleet } from '../kit/harness.ts';
import { recordRow } from './compat-rows.ts';

const MODEL = 'interop-node';
const OUTPUT_TOKENS = 8;
const TOOL_ARGS_BYTES = 1500;
const SUBJECT = 'openai (npm)';
const VERSION = (JSON.parse(readFileSync(new URL('../../node_modules/openai/package.json', import.meta.url), 'utf8')) as { version: string }).version;
const FILE = 'tests/interop/openai-node.interop.ts';
const TOOLS = [
  { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } },
  { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
];

/** What the simulator generates for a text answer of {@link OUTPUT_TOKENS} tokens. */
const EXPECTED_TEXT = Array.from({ length: OUTPUT_TOKENS }, (_, i) => tokenText(i)).join('');

function row(exercised: string, test: string): void {
  recordRow({ area: 'client', subject: SUBJECT, version: VERSION, exercised, result: 'pass', test: `${FILE}: ${test}` });
}

function client(base: string, options: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}): OpenAI {
  return new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-interop', ...options });
}

/** The function tool calls of an answer's message, as plain objects (the stream helper's carry no extra keys). */
function calls(completion: OpenAI.ChatCompletion): { id: string; type: 'function'; function: { name: string; arguments: string } }[] {
  return (completion.choices[0]?.message.tool_calls ?? []).map((call) => {
    assert.equal(call.type, 'function');
    return { id: call.id, type: call.type, function: { name: call.function.name, arguments: call.function.arguments } };
  });
}

/**
 * The tool calls the simulator answers a request offering {@link TOOLS} with, three per answer:
 * ids and arguments derive from the engine's request number, read from the first call's id.
 */
function expectedCalls(firstId: string): ReturnType<typeof calls> {
  const seed = Number(/^call_(\d+)$/.exec(firstId)?.[1]);
  assert.ok(Number.isInteger(seed), `unexpected tool call id ${firstId}`);
  return ['get_weather', 'get_time', 'get_weather'].map((name, i) => ({ id: i === 0 ? `call_${seed}` : `call_${seed}_${i}`, type: 'function' as const, function: { name, arguments: toolArguments(TOOL_ARGS_BYTES, seed + i) } }));
}

/** The engine of `engines` that recorded `requestId`. */
function engineOf(fleet: Fleet, requestId: string) {
  const engine = fleet.engines.find((e) => e.received(requestId) !== undefined);
  assert.ok(engine, `no engine received ${requestId}`);
  return engine;
}

describe('openai (npm) SDK through switchyard', () => {
  let fleet: Fleet;
  let openai: OpenAI;
  before(async () => {
    // Split writes: the SDK's SSE parser must cope with events cut anywhere, as on a real network.
    const knobs = { split: true, ttftMs: 5, itlMs: 1, outputTokens: OUTPUT_TOKENS, toolArgsBytes: TOOL_ARGS_BYTES, maxSeqs: 64 };
    fleet = await startFleet([{ model: MODEL, knobs }, { model: MODEL, knobs, seed: 7 }]);
    openai = client(fleet.base);
  });
  after(() => fleet.close());

  it('chat completions, non-streamed and streamed with the stream helper', async () => {
    const messages = [{ role: 'user' as const, content: 'Say hello.' }];
    const completion = await openai.chat.completions.create({ model: MODEL, messages });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.choices[0]?.message.content, EXPECTED_TEXT);
    assert.equal(completion.choices[0]?.finish_reason, 'stop');
    assert.equal(completion.usage?.completion_tokens, OUTPUT_TOKENS);

    const stream = openai.chat.completions.stream({ model: MODEL, messages });
    let deltas = '';
    stream.on('content', (delta) => {
      deltas += delta;
    });
    const final = await stream.finalChatCompletion();
    assert.equal(deltas, EXPECTED_TEXT);
    assert.equal(final.choices[0]?.message.content, EXPECTED_TEXT);
    assert.equal(final.choices[0]?.finish_reason, 'stop');

    // The plain iterator over `stream: true` as well.
    let iterated = '';
    for await (const chunk of await openai.chat.completions.create({ model: MODEL, messages, stream: true })) iterated += chunk.choices[0]?.delta.content ?? '';
    assert.equal(iterated, EXPECTED_TEXT);
    row('chat.completions.create (stream and not), chat.completions.stream helper', 'chat completions, non-streamed and streamed with the stream helper');
  });

  it('chat with tools: several tool calls, streamed accumulation equals the non-streamed message', async () => {
    const messages = [{ role: 'user' as const, content: 'Weather in Zürich and Tokyo, and the time in São Paulo?' }];
    // Three calls whose argument fragments interleave call by call in the stream (the simulator's toolCalls knob).
    const options = { headers: { 'x-sim-tool-calls': '3' } };
    const whole = await openai.chat.completions.create({ model: MODEL, messages, tools: TOOLS }, options);
    assert.equal(whole.choices[0]?.finish_reason, 'tool_calls');
    const streamHelper = openai.chat.completions.stream({ model: MODEL, messages, tools: TOOLS }, options);
    // The helper announces a call's arguments as done each time the stream moves on to another call's
    // fragments (it expects calls one after another), so with interleaved fragments only the last announcement per call is whole.
    const lastDone = new Map<number, string>();
    streamHelper.on('tool_calls.function.arguments.done', (event) => lastDone.set(event.index, event.arguments));
    const streamed = await streamHelper.finalChatCompletion();
    assert.equal(streamed.choices[0]?.finish_reason, 'tool_calls');
    const streamedCalls = calls(streamed);
    assert.deepEqual([...lastDone].sort(([a], [b]) => a - b).map(([, args]) => args), streamedCalls.map((call) => call.function.arguments));
    // Streamed and not, each answer is exactly the engine's three calls (ids and arguments numbered by its request count).
    const wholeCalls = calls(whole);
    assert.deepEqual(wholeCalls, expectedCalls(wholeCalls[0]?.id ?? ''));
    assert.deepEqual(streamedCalls, expectedCalls(streamedCalls[0]?.id ?? ''));
    for (const call of streamedCalls) {
      assert.ok(Buffer.byteLength(call.function.arguments) > 1024, 'arguments over 1 KiB, split on the way');
      assert.doesNotThrow(() => JSON.parse(call.function.arguments) as unknown);
    }
    row('chat with tools: 3 tool calls per answer (interleaved streamed fragments, 1.5 KiB arguments each), streamed accumulation equals non-streamed', 'chat with tools: several tool calls, streamed accumulation equals the non-streamed message');
  });

  it('legacy completions, streamed and not', async () => {
    const whole = await openai.completions.create({ model: MODEL, prompt: 'Once upon a time' });
    assert.equal(whole.choices[0]?.text, EXPECTED_TEXT);
    let streamed = '';
    for await (const chunk of await openai.completions.create({ model: MODEL, prompt: 'Once upon a time', stream: true })) streamed += chunk.choices[0]?.text ?? '';
    assert.equal(streamed, EXPECTED_TEXT);
    row('completions.create (stream and not)', 'legacy completions, streamed and not');
  });

  it('embeddings and models.list', async () => {
    const embeddings = await openai.embeddings.create({ model: MODEL, input: 'switchyard' });
    assert.deepEqual(embeddings.data[0]?.embedding, [0.1, -0.2, 0.3, 0.05]);
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    assert.deepEqual(ids, [MODEL]);
    row('embeddings.create, models.list', 'embeddings and models.list');
  });

  it('responses API: create streamed and not, and previous_response_id', async () => {
    // The engines split their writes anywhere, so the id the router learns the stored response's engine from
    // may arrive in pieces (router/request/response-id.ts); a lost pin would show as the SDK's NotFoundError.
    const first = await openai.responses.create({ model: MODEL, input: 'Hello there' });
    assert.equal(first.status, 'completed');
    assert.equal(first.output_text, EXPECTED_TEXT);

    const stream = await openai.responses.create({ model: MODEL, input: 'And then?', previous_response_id: first.id, stream: true });
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(text, EXPECTED_TEXT);
    assert.equal(completed?.previous_response_id, first.id);

    const helper = openai.responses.stream({ model: MODEL, input: 'Go on.', previous_response_id: completed?.id ?? '' });
    const final = await helper.finalResponse();
    assert.equal(final.output_text, EXPECTED_TEXT);
    assert.equal(final.previous_response_id, completed?.id);
    row('responses.create (stream and not), responses.stream, previous_response_id', 'responses API: create streamed and not, and previous_response_id');
  });

  it('maps switchyard errors to the SDK error classes', async () => {
    await assert.rejects(openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }), (err: unknown) => {
      assert.ok(err instanceof NotFoundError, String(err));
      assert.equal(err.status, 404);
      assert.equal(err.code, 'SWITCHYARD_MODEL_NOT_FOUND');
      assert.equal(err.type, 'not_found_error');
      assert.equal(err.param, 'model');
      assert.match(err.message, /The model `no-such-model` does not exist\./);
      return true;
    });
    // A body without `model`, as a client with a typo in its request builder sends it.
    await assert.rejects(openai.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming), (err: unknown) => {
      assert.ok(err instanceof BadRequestError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.code, 'SWITCHYARD_MISSING_MODEL');
      assert.equal(err.type, 'invalid_request_error');
      return true;
    });
    row('error mapping: unknown model is NotFoundError, missing model is BadRequestError', 'maps switchyard errors to the SDK error classes');
  });

  it('SDK timeout on a slow non-streamed request reaches the engine as an abandoned response', async () => {
    const requestId = 'node-timeout-1';
    await assert.rejects(
      openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'slow' }] }, { timeout: 300, maxRetries: 0, headers: { 'x-request-id': requestId, 'x-sim-ttft-ms': '10000' } }),
      APIConnectionTimeoutError,
    );
    const engine = engineOf(fleet, requestId);
    await waitFor(() => engine.sent(requestId) !== undefined);
    assert.equal(engine.sent(requestId)?.complete, false);
    await waitFor(() => fleet.router.inFlight === 0);
    assert.equal((await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'again' }] })).choices[0]?.message.content, EXPECTED_TEXT);
    row('timeout on a non-streamed request: engine sees the response abandoned, router healthy', 'SDK timeout on a slow non-streamed request reaches the engine as an abandoned response');
  });

  it('AbortController abort mid-stream reaches the engine as an abandoned response', async () => {
    const requestId = 'node-abort-1';
    const controller = new AbortController();
    const stream = await openai.chat.completions.create(
      { model: MODEL, messages: [{ role: 'user', content: 'long' }], stream: true },
      { signal: controller.signal, headers: { 'x-request-id': requestId, 'x-sim-output-tokens': '400', 'x-sim-itl-ms': '20' } },
    );
    let chunks = 0;
    let finished = false;
    // The SDK's stream iterator ends quietly when its signal aborts.
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      finished ||= chunk.choices[0]?.finish_reason !== null;
      if (++chunks === 3) controller.abort();
    }
    assert.equal(finished, false);
    assert.ok(chunks < 400, `read ${chunks} chunks after the abort`);
    const engine = engineOf(fleet, requestId);
    await waitFor(() => engine.sent(requestId) !== undefined);
    const sent = engine.sent(requestId);
    assert.equal(sent?.complete, false);
    await waitFor(() => fleet.router.inFlight === 0);
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'again' }], stream: true })) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, EXPECTED_TEXT);
    row('AbortController abort mid-stream: engine sees the response abandoned, router healthy', 'AbortController abort mid-stream reaches the engine as an abandoned response');
  });
});

/** One fetch the SDK made: when it started and, once answered, when and how. */
interface Attempt {
  readonly startedAt: number;
  answeredAt?: number;
  status?: number;
  retryAfter?: string | null;
  retryAfterMs?: string | null;
}

describe('openai (npm) SDK retry against a shedding switchyard', () => {
  let fleet: Fleet;
  before(async () => {
    // One engine the router may send one request at a time, and no router queue: a second request is shed at once.
    fleet = await startFleet([{ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: OUTPUT_TOKENS } }], ['--admission-max-in-flight-per-endpoint', '1', '--admission-queue-length', '0']);
  });
  after(() => fleet.close());

  it('a shed request succeeds on the SDK retry after the advertised Retry-After', async (t) => {
    const attempts: Attempt[] = [];
    const logged: typeof fetch = async (input, init) => {
      const attempt: Attempt = { startedAt: performance.now() };
      attempts.push(attempt);
      const response = await fetch(input, init);
      attempt.answeredAt = performance.now();
      attempt.status = response.status;
      attempt.retryAfter = response.headers.get('retry-after');
      attempt.retryAfterMs = response.headers.get('retry-after-ms');
      return response;
    };
    const sdk = client(fleet.base, { fetch: logged }); // the SDK's default maxRetries
    const engine = fleet.engines[0]!;
    // Holds the one slot for 500 ms: over before any Retry-After (at least 1 s) runs out.
    const holding = sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hold' }] }, { headers: { 'x-sim-ttft-ms': '500' } });
    await waitFor(() => engine.scheduler.running === 1);
    const retried = await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'retry me' }] }, { headers: { 'x-request-id': 'node-retry-1' } });
    assert.equal((await holding).choices[0]?.message.content, EXPECTED_TEXT);
    assert.equal(retried.choices[0]?.message.content, EXPECTED_TEXT);

    const [, shed, retry, ...rest] = attempts;
    assert.equal(rest.length, 0, 'one retry was enough');
    assert.equal(shed?.status, 429);
    assert.equal(retry?.status, 200);
    assert.ok(engine.received('node-retry-1'), 'the retry reached the engine');
    const advertisedMs = Number(shed.retryAfter) * 1000;
    assert.ok(advertisedMs >= 1000, `Retry-After ${String(shed.retryAfter)}`);
    const waitedMs = retry.startedAt - (shed.answeredAt ?? 0);
    const expectedMs = shed.retryAfterMs === null || shed.retryAfterMs === undefined ? advertisedMs : Number(shed.retryAfterMs);
    assert.ok(Math.abs(waitedMs - expectedMs) <= 0.2 * expectedMs, `retried after ${waitedMs.toFixed(0)} ms, advertised ${expectedMs} ms`);
    if (shed.retryAfterMs !== null && shed.retryAfterMs !== undefined) assert.ok(Math.abs(Number(shed.retryAfterMs) - advertisedMs) <= 0.2 * advertisedMs, 'retry-after-ms agrees with Retry-After');
    t.diagnostic(`Retry-After ${String(shed.retryAfter)} s, retry-after-ms ${String(shed.retryAfterMs)}, the SDK retried after ${waitedMs.toFixed(0)} ms`);
    row('default maxRetries against a 429 shed: retried after Retry-After (within 20%), then 200', 'a shed request succeeds on the SDK retry after the advertised Retry-After');
  });
});

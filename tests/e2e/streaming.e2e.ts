import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { postJson, send, sseData, startFleet, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-stream';
const chat = (extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  messages: [{ role: 'user', content: 'what is the weather?' }],
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
  ...extra,
});

/** Reassembles streamed tool calls and returns them parsed (throws on any corruption). */
function toolCallsOf(body: Buffer): { name: string; args: unknown }[] {
  const calls = new Map<number, { name: string; args: string }>();
  const events = sseData(body);
  assert.equal(events.at(-1), '[DONE]');
  for (const data of events.slice(0, -1)) {
    const chunk = JSON.parse(data) as { choices: { delta: { tool_calls?: { index: number; function: { name?: string; arguments?: string } }[] } }[] };
    for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
      const entry = calls.get(call.index) ?? { name: '', args: '' };
      entry.name += call.function.name ?? '';
      entry.args += call.function.arguments ?? '';
      calls.set(call.index, entry);
    }
  }
  return [...calls.values()].map((c) => ({ name: c.name, args: JSON.parse(c.args) as unknown }));
}

describe('streaming through the router', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([
      { model: MODEL, knobs: { split: true, itlMs: 1, ttftMs: 5, maxSeqs: 1000, toolArgsBytes: 2048 } },
      { model: MODEL, knobs: { split: true, itlMs: 1, ttftMs: 5, maxSeqs: 1000, toolArgsBytes: 2048 }, seed: 7 },
    ]);
  });
  after(() => fleet.close());

  it('delivers a streamed tool call byte-identical to what the engine sent, split at arbitrary points', async () => {
    for (let i = 0; i < 20; i++) {
      const requestId = `hash-${i}`;
      const response = await postJson(`${fleet.base}/v1/chat/completions`, chat({ stream: true }), { 'x-request-id': requestId });
      assert.equal(response.status, 200);
      assert.equal(response.headers['x-request-id'], requestId);
      const sent = fleet.engines.map((e) => e.sent(requestId)).find((r) => r !== undefined);
      assert.ok(sent, 'an engine served the request');
      assert.equal(createHash('sha256').update(response.body).digest('hex'), sent.sha256);
      const [call] = toolCallsOf(response.body);
      assert.equal(call?.name, 'get_weather');
      assert.ok(JSON.stringify(call?.args).length > 1024);
    }
  });

  it('forwards the request body bytes unchanged', async () => {
    const raw = '{"model":"m-stream",  "messages":[{"role":"user","content":"caf\\u00e9 ☕"}],"extra":1.50}';
    const res = await send(`${fleet.base}/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', 'x-request-id': 'body-bytes-2' },
      body: raw,
    });
    assert.equal(res.status, 200);
    const received = fleet.engines.map((e) => e.received('body-bytes-2')).find((r) => r !== undefined);
    assert.equal(received?.bodySha256, createHash('sha256').update(raw).digest('hex'));
  });

  it('forwards a large body that arrives in many pieces unchanged, declared or chunked', async () => {
    // ~300 KB with multi-byte characters, written in uneven pieces with pauses between
    // them so the router sees many socket reads, some splitting a character in two.
    const content = 'caf\u00e9 ☕ 𝄞 '.repeat(20_000);
    const raw = Buffer.from(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content }], max_tokens: 1 }));
    const pieces: Buffer[] = [];
    for (let at = 0, size = 1; at < raw.length; at += size, size = (size * 7 + 13) % 40_000 + 1) pieces.push(raw.subarray(at, at + size));
    const url = new URL(fleet.base);
    for (const framing of ['content-length', 'chunked'] as const) {
      const requestId = `large-body-${framing}`;
      const status = await new Promise<number>((resolve, reject) => {
        const writeInPieces = async (): Promise<void> => {
          const length = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${raw.length}`;
          socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Request-Id: ${requestId}\r\n${length}\r\nConnection: close\r\n\r\n`);
          for (const piece of pieces) {
            socket.write(framing === 'chunked' ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
            await new Promise((pause) => setImmediate(pause));
          }
          if (framing === 'chunked') socket.write('0\r\n\r\n');
        };
        const socket = connect(Number(url.port), url.hostname, () => void writeInPieces());
        let head = '';
        socket.setEncoding('utf8').on('data', (text: string) => (head += text));
        socket.on('close', () => resolve(Number(head.slice(9, 12))));
        socket.on('error', reject);
      });
      assert.equal(status, 200, framing);
      const received = fleet.engines.map((e) => e.received(requestId)).find((r) => r !== undefined);
      assert.equal(received?.bodyBytes, raw.length, framing);
      assert.equal(received?.bodySha256, createHash('sha256').update(raw).digest('hex'), framing);
    }
  });

  it('keeps 500 concurrent tool-call streams intact and separate', async () => {
    const responses = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        postJson(`${fleet.base}/v1/chat/completions`, chat({ stream: true }), { 'x-request-id': `c500-${i}` }),
      ),
    );
    for (const [i, response] of responses.entries()) {
      assert.equal(response.status, 200);
      const calls = toolCallsOf(response.body);
      assert.equal(calls.length, 1);
      assert.equal(calls[0]?.name, 'get_weather');
      const sent = fleet.engines.map((e) => e.sent(`c500-${i}`)).find((r) => r !== undefined);
      assert.equal(createHash('sha256').update(response.body).digest('hex'), sent?.sha256, `stream ${i} differs from what the engine sent`);
    }
  });

  it('passes non-streaming responses through unchanged', async () => {
    const response = await postJson(`${fleet.base}/v1/chat/completions`, chat(), { 'x-request-id': 'plain-1' });
    assert.equal(response.status, 200);
    const sent = fleet.engines.map((e) => e.sent('plain-1')).find((r) => r !== undefined);
    assert.equal(createHash('sha256').update(response.body).digest('hex'), sent?.sha256);
    const body = JSON.parse(response.body.toString('utf8')) as { choices: { message: { tool_calls: { function: { name: string; arguments: string } }[] } }[] };
    assert.equal(body.choices[0]?.message.tool_calls[0]?.function.name, 'get_weather');
    JSON.parse(body.choices[0]?.message.tool_calls[0]?.function.arguments ?? '');
  });
});

/**
 * HTTP edge cases at the traffic port. Each used to get an answer no OpenAI
 * client expects, or let a client speak for others:
 * - a `#fragment` in the target made the inference POST a 405;
 * - `Expect: foo`, a missing Host and the `*` target got Node's empty bodies;
 * - `100 Continue` went out before the 413 for an oversized declared body, so
 *   the client sent megabytes only to have them refused;
 * - `X-Forwarded-Host`, `Forwarded` and `X-Real-IP` from any client reached
 *   the engines unchanged.
 * Raw sockets, because Node's client adds Host and never sends a fragment.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { postJson, startFleet, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-edges';
const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
let fleet: Fleet;
let port: number;

before(async () => {
  fleet = await startFleet([{ model: MODEL }], ['--server-max-body-bytes', '4096']);
  port = Number(new URL(fleet.base).port);
});
after(() => fleet.close());

/** Bound on one raw exchange (ms): only reached when a server keeps the connection open against the test's `Connection: close`. */
const EXCHANGE_BOUND_MS = 5_000;

/**
 * Writes `head` (request line and headers, without the blank line) with
 * `Connection: close`, then `rest`, on a fresh connection, and collects all
 * the server sends until it closes.
 */
function exchange(head: string, rest = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}\r\nConnection: close\r\n\r\n${rest}`));
    let out = '';
    const bound = setTimeout(() => socket.destroy(), EXCHANGE_BOUND_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (out += chunk));
    socket.on('close', () => {
      clearTimeout(bound);
      resolve(out);
    });
    socket.on('error', reject);
  });
}

/** Status and parsed OpenAI error of a single raw response. */
function openAiError(response: string): { status: number; code: string; type: string } {
  const text = response.slice(response.indexOf('\r\n\r\n') + 4);
  let error: { code: string; type: string; message: string } | undefined;
  try {
    error = (JSON.parse(text) as { error?: { code: string; type: string; message: string } }).error;
  } catch {
    error = undefined;
  }
  if (error === undefined || typeof error.message !== 'string') assert.fail(`not an OpenAI error body:\n${response}`);
  return { status: Number(response.slice(9, 12)), code: error.code, type: error.type };
}

test('regression: a request target with a #fragment got 405 instead of being routed without the fragment', async () => {
  const response = await exchange(
    `POST /v1/chat/completions#section HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\nX-Request-Id: edge-fragment\r\nContent-Length: ${Buffer.byteLength(body)}`,
    body,
  );
  assert.ok(response.startsWith('HTTP/1.1 200 '), response.slice(0, 200));
  assert.equal(fleet.engines[0]?.received('edge-fragment')?.path, '/v1/chat/completions');
});

test("regression: Expect: foo, a missing Host and the * target got Node's empty bodies instead of OpenAI errors", async () => {
  assert.deepEqual(openAiError(await exchange(`POST /v1/chat/completions HTTP/1.1\r\nHost: router\r\nExpect: foo\r\nContent-Length: ${Buffer.byteLength(body)}`, body)), {
    status: 417,
    code: 'SWITCHYARD_EXPECTATION_FAILED',
    type: 'invalid_request_error',
  });
  assert.deepEqual(openAiError(await exchange(`POST /v1/chat/completions HTTP/1.1\r\nContent-Length: ${Buffer.byteLength(body)}`, body)), {
    status: 400,
    code: 'SWITCHYARD_BAD_REQUEST',
    type: 'invalid_request_error',
  });
  for (const method of ['OPTIONS', 'GET']) {
    assert.deepEqual(openAiError(await exchange(`${method} * HTTP/1.1\r\nHost: router`)), { status: 400, code: 'SWITCHYARD_BAD_REQUEST', type: 'invalid_request_error' });
  }
});

test('regression: 100 Continue went out before the 413 for a declared body over server.maxBodyBytes', async () => {
  // The body is never sent: the client waits for 100 Continue, as curl and most SDKs do.
  const response = await exchange('POST /v1/chat/completions HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 1000000');
  assert.ok(!response.includes('100 Continue'), response.slice(0, 200));
  assert.deepEqual(openAiError(response), { status: 413, code: 'SWITCHYARD_BODY_TOO_LARGE', type: 'invalid_request_error' });
});

test('regression: X-Forwarded-Host, Forwarded and X-Real-IP from any client reached the engines unchanged', async () => {
  const claims = { 'x-forwarded-host': 'evil.example', forwarded: 'for=203.0.113.9;host=evil.example', 'x-real-ip': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' };
  const sent = await postJson(`${fleet.base}/v1/chat/completions`, JSON.parse(body), { ...claims, 'x-request-id': 'edge-untrusted' });
  assert.equal(sent.status, 200);
  const headers = fleet.engines[0]?.received('edge-untrusted')?.headers ?? {};
  assert.equal(headers['x-forwarded-host'], undefined);
  assert.equal(headers['forwarded'], undefined);
  assert.equal(headers['x-real-ip'], undefined);
  assert.equal(headers['x-forwarded-proto'], 'http');
  assert.equal(headers['x-forwarded-for'], '127.0.0.1');

  // From a trusted proxy they pass on, with this hop appended where the header is a chain.
  const trusted = await startFleet([{ model: MODEL }], ['--server-trusted-proxies', '127.0.0.1']);
  try {
    assert.equal((await postJson(`${trusted.base}/v1/chat/completions`, JSON.parse(body), { ...claims, 'x-request-id': 'edge-trusted' })).status, 200);
    const passed = trusted.engines[0]?.received('edge-trusted')?.headers ?? {};
    assert.equal(passed['x-forwarded-host'], 'evil.example');
    assert.equal(passed['x-real-ip'], '203.0.113.9');
    assert.equal(passed['forwarded'], 'for=203.0.113.9;host=evil.example, for=127.0.0.1');
    assert.equal(passed['x-forwarded-proto'], 'https');
    assert.equal(passed['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
  } finally {
    await trusted.close();
  }
});

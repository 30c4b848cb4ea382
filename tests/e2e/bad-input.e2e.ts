import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { errorOf, postJson, send, startFleet, type Fleet, type RawResponse } from '../kit/harness.ts';

const MODEL = 'm-bad';

/** Writes raw bytes on a new connection and returns everything the server sent back until it closed. */
function rawExchange(base: string, payload: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.end(payload));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

function jsonErrorOfRaw(raw: string): { status: number; code: string } {
  const status = Number(raw.slice(9, 12));
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return { status, code: (JSON.parse(body) as { error: { code: string } }).error.code };
}

describe('bad input', () => {
  let fleet: Fleet;
  let forwardedBefore = 0;
  before(async () => {
    fleet = await startFleet([{ model: MODEL, knobs: { ttftMs: 0, itlMs: 0 } }], ['--server-max-body-bytes', '65536', '--server-max-json-depth', '32']);
  });
  after(() => fleet.close());

  const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
    send(`${fleet.base}/v1/chat/completions`, { headers: { 'content-type': 'application/json', ...headers }, body });

  async function expectRejected(response: RawResponse, status: number, code: string): Promise<void> {
    assert.equal(response.status, status);
    assert.equal(response.headers['content-type'], 'application/json');
    const error = errorOf(response);
    assert.equal(error.code, code);
    assert.equal(typeof error.message, 'string');
    assert.ok('param' in error && 'type' in error);
    // The process is unharmed and still routes.
    const ok = await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL, messages: [] });
    assert.equal(ok.status, 200);
  }

  it('never forwards a rejected request', { concurrency: false }, async (t) => {
    forwardedBefore = fleet.engines[0]?.requests ?? 0;
    const cases: [string, () => Promise<RawResponse>, number, string][] = [
      ['malformed JSON', () => post('{"model": "m-bad",'), 400, 'SWITCHYARD_INVALID_JSON'],
      ['invalid UTF-8', () => post(Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])), 400, 'SWITCHYARD_INVALID_UTF8'],
      ['body not an object', () => post('[1,2,3]'), 400, 'SWITCHYARD_INVALID_BODY'],
      ['model missing', () => post('{"messages":[]}'), 400, 'SWITCHYARD_MISSING_MODEL'],
      ['model not a string', () => post('{"model":42}'), 400, 'SWITCHYARD_MISSING_MODEL'],
      ['deep nesting', () => post(`{"model":"m-bad","x":${'['.repeat(40)}${']'.repeat(40)}}`), 400, 'SWITCHYARD_NESTING_TOO_DEEP'],
      ['brackets inside strings do not count as nesting', () => post(`{"model":"nope","x":"${'['.repeat(100)}"}`), 404, 'SWITCHYARD_MODEL_NOT_FOUND'],
      ['body over the limit', () => post(`{"model":"m-bad","x":"${'a'.repeat(70_000)}"}`), 413, 'SWITCHYARD_BODY_TOO_LARGE'],
      ['unknown model', () => post('{"model":"no-such-model"}'), 404, 'SWITCHYARD_MODEL_NOT_FOUND'],
      ['unknown path', () => send(`${fleet.base}/v1/nothing`, { body: '{}' }), 404, 'SWITCHYARD_NOT_FOUND'],
      ['wrong method', () => send(`${fleet.base}/v1/chat/completions`, { method: 'GET' }), 405, 'SWITCHYARD_METHOD_NOT_ALLOWED'],
      ['wrong method on a local route', () => send(`${fleet.base}/v1/models`, { method: 'DELETE' }), 405, 'SWITCHYARD_METHOD_NOT_ALLOWED'],
    ];
    for (const [name, run, status, code] of cases) {
      await t.test(name, async () => expectRejected(await run(), status, code));
    }
    // Only the health-check requests made by expectRejected reached the engine.
    assert.equal((fleet.engines[0]?.requests ?? 0) - forwardedBefore, cases.length);
  });

  it('uses vLLM\'s words for an unknown model', async () => {
    const response = await postJson(`${fleet.base}/v1/chat/completions`, { model: 'gpt-none' });
    assert.equal(errorOf(response).message, 'The model `gpt-none` does not exist.');
    assert.equal(errorOf(response).param, 'model');
  });

  it('answers 405 with an Allow header', async () => {
    const response = await send(`${fleet.base}/v1/embeddings`, { method: 'PUT', body: '{}' });
    assert.equal(response.headers['allow'], 'POST');
  });

  it('answers headers over the limit with 431 in the JSON error shape', async () => {
    const raw = await rawExchange(fleet.base, `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`);
    assert.deepEqual(jsonErrorOfRaw(raw), { status: 431, code: 'SWITCHYARD_HEADERS_TOO_LARGE' });
  });

  it('answers conflicting Content-Length and Transfer-Encoding with 400 in the JSON error shape', async () => {
    const raw = await rawExchange(
      fleet.base,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    assert.deepEqual(jsonErrorOfRaw(raw), { status: 400, code: 'SWITCHYARD_BAD_REQUEST' });
  });

  it('replaces an over-long or non-printable request id instead of echoing it', async () => {
    const long = 'a'.repeat(200);
    const r1 = await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL }, { 'x-request-id': long });
    assert.notEqual(r1.headers['x-request-id'], long);
    assert.match(String(r1.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const r2 = await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL }, { 'x-request-id': 'bad id\twith tab' });
    assert.match(String(r2.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const r3 = await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL }, { 'x-request-id': 'good-id-123' });
    assert.equal(r3.headers['x-request-id'], 'good-id-123');
  });

  it('labels metrics with "unknown" for models it does not know', async () => {
    for (let i = 0; i < 5; i++) await postJson(`${fleet.base}/v1/chat/completions`, { model: `attacker-${i}` });
    const metrics = await (await fetch(`${fleet.admin}/metrics`)).text();
    assert.doesNotMatch(metrics, /attacker-/);
    assert.match(metrics, /switchyard_requests_total\{route="\/v1\/chat\/completions",model="unknown",status="404"\}/);
  });
});

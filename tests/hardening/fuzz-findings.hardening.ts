/**
 * What the fuzz run (fuzz.hardening.ts) found, pinned one case each:
 * answers that were not well-formed HTTP, or no answer at all, where the
 * contract asks for one clean response per request.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FuzzingEngine, cleanAnswer } from './fuzz/fuzzing-engine.ts';
import { headerOf, rawExchange } from './fuzz/raw-http.ts';
import { startFleet, waitFor } from '../kit/harness.ts';

const portOf = (base: string) => Number(new URL(base).port);

test('regression: an SSE answer with a Content-Length cut short by the engine got an error event past that length, which a keep-alive client reads as its next response', async () => {
  const engine = new FuzzingEngine('cut-model', 1);
  await engine.listen();
  const fleet = await startFleet([], [], engine.urls);
  try {
    await waitFor(() => fleet.router.view.knowsModel('cut-model'));
    const id = 'cut-sse';
    // Declares 10 bytes more than it sends, then closes.
    engine.script(id, [{ ...cleanAnswer({ kind: 'sse', contents: ['Hel', 'lo'], done: false }, 'text/event-stream'), framing: 'length-too-long' }]);
    const body = JSON.stringify({ model: 'cut-model', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const request = `POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\nx-request-id: ${id}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const outcome = await rawExchange(portOf(fleet.base), [Buffer.from(request)], { methods: ['POST'], deadlineMs: 5_000, graceMs: 500 });
    assert.equal(outcome.malformed, undefined, 'a well-formed response');
    const response = outcome.responses[0];
    assert.ok(response !== undefined, `an answer (${outcome.end})`);
    assert.equal(response.status, 200);
    assert.equal(headerOf(response, 'content-length'), String(Number(engine.answered.get(id)?.[0]?.expect.payload.length) + 10));
    assert.equal(response.complete, false, 'the body ends short of its length: the client sees the cut');
    assert.doesNotMatch(response.body.toString(), /SWITCHYARD_UPSTREAM_FAILED/, 'no error event inside a length-delimited body');
  } finally {
    await fleet.close();
    await engine.close();
  }
});

test('regression: CONNECT got its connection closed without an answer', async () => {
  const fleet = await startFleet([{ model: 'm' }]);
  try {
    const outcome = await rawExchange(portOf(fleet.base), [Buffer.from('CONNECT engine.example:443 HTTP/1.1\r\nHost: engine.example:443\r\n\r\n')], {
      methods: ['CONNECT'],
      deadlineMs: 5_000,
      graceMs: 500,
    });
    assert.equal(outcome.malformed, undefined);
    assert.equal(outcome.responses[0]?.status, 405, `a 405 (${outcome.end})`);
    assert.match(outcome.responses[0]?.body.toString() ?? '', /"code":"SWITCHYARD_METHOD_NOT_ALLOWED"/);
  } finally {
    await fleet.close();
  }
});

test('regression: a request refused at once (no Host) whose chunked body then broke its framing got two answers', async () => {
  const fleet = await startFleet([{ model: 'm' }]);
  try {
    const request = 'POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\ncontent-type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n';
    const outcome = await rawExchange(portOf(fleet.base), [Buffer.from(request)], { methods: ['POST'], deadlineMs: 5_000, graceMs: 500 });
    assert.equal(outcome.responses.length, 1);
    assert.equal(outcome.responses[0]?.status, 400);
    assert.equal(outcome.malformed, undefined, 'nothing after the one answer');
  } finally {
    await fleet.close();
  }
});

/**
 * X-Forwarded-For is a claim like X-Real-IP or Forwarded, and the
 * configuration reference said an untrusted client's forwarding headers are
 * dropped; yet the router appended the socket address to the client's own
 * X-Forwarded-For, so an engine (and every log that takes the leftmost entry
 * as the client) saw `6.6.6.6, 127.0.0.1`. From a client that is not a
 * trusted proxy the header is now the socket address alone; a trusted
 * proxy's chain still passes on with this hop appended.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postJson, startFleet, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-xff';
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
let untrusting: Fleet;
let trusting: Fleet;

before(async () => {
  untrusting = await startFleet([{ model: MODEL }]);
  trusting = await startFleet([{ model: MODEL }], ['--server-trusted-proxies', '127.0.0.0/8']);
});
after(() => Promise.all([untrusting.close(), trusting.close()]));

test('regression: an untrusted client\'s X-Forwarded-For (6.6.6.6) reached the engines ahead of its socket address', async () => {
  const spoofed = await postJson(`${untrusting.base}/v1/chat/completions`, chat, { 'x-forwarded-for': '6.6.6.6', 'x-request-id': 'xff-untrusted' });
  assert.equal(spoofed.status, 200);
  assert.equal(untrusting.engines[0]?.received('xff-untrusted')?.headers['x-forwarded-for'], '127.0.0.1');

  const trusted = await postJson(`${trusting.base}/v1/chat/completions`, chat, { 'x-forwarded-for': '203.0.113.9, 10.0.0.5', 'x-request-id': 'xff-trusted' });
  assert.equal(trusted.status, 200);
  assert.equal(trusting.engines[0]?.received('xff-trusted')?.headers['x-forwarded-for'], '203.0.113.9, 10.0.0.5, 127.0.0.1');
});

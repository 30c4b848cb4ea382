/**
 * The admin port had no connection cap and was not reserved in the open-file
 * budget: with a 1,024-descriptor limit, 1,100 idle admin connections left
 * the traffic port unable to accept. Here a router runs with 256 descriptors
 * (its traffic caps fitted to them) and a client opens 400 admin connections
 * that never finish a request, half of them idle, half with headers half sent.
 * The admin port now holds at most its cap (reserved in the budget), closing
 * the oldest quiet connection for each new one, so traffic is still served
 * and the probes still answer.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { postJson, send, startRouterProcess, type RouterProcess } from '../kit/harness.ts';

const MODEL = 'm-admin-cap';
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const OPEN_FILES = 256;
const FLOOD = 400;
let engine: EngineSimulator;
let router: RouterProcess;
const flood: Socket[] = [];

before(async () => {
  engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0 } });
  await engine.listen();
  router = await startRouterProcess(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url], [], OPEN_FILES);
});
after(async () => {
  for (const socket of flood) socket.destroy();
  router.child.kill('SIGKILL');
  await router.exit;
  await engine.close();
});

const openDescriptors = (): number => readdirSync(`/proc/${router.child.pid}/fd`).length;

/** Opens one admin connection that never completes a request; resolves once connected. */
function quietConnection(halfSent: boolean): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(router.admin, '127.0.0.1', () => {
      if (halfSent) socket.write('GET /metrics HTTP/1.1\r\nHost: admin\r\n');
      resolve();
    });
    socket.on('error', () => undefined);
    flood.push(socket);
  });
}

test('regression: idle admin connections could take every descriptor and leave the traffic port unable to accept', async (t) => {
  const traffic = `http://127.0.0.1:${router.traffic}`;
  // Served once the router has read the engine's model list.
  for (let i = 0; i < 100 && (await postJson(`${traffic}/v1/chat/completions`, chat)).status !== 200; i++) await sleep(50);
  const baseline = openDescriptors();
  for (let i = 0; i < FLOOD; i++) await quietConnection(i % 2 === 1);
  // Let the admin thread accept what it will.
  await sleep(500);
  const held = openDescriptors() - baseline;
  t.diagnostic(`admin flood of ${FLOOD} connections holds ${held} of the router's ${OPEN_FILES} descriptors`);

  const answer = await send(`${traffic}/v1/chat/completions`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat), signal: AbortSignal.timeout(5_000) }).catch((err: unknown) => err);
  assert.equal((answer as { status?: number }).status, 200, `the traffic port did not answer: ${String(answer)}`);
  for (const probe of ['/livez', '/readyz']) {
    const answered = await send(`http://127.0.0.1:${router.admin}${probe}`, { method: 'GET', signal: AbortSignal.timeout(5_000) });
    assert.equal(answered.status, 200, probe);
  }
  // The default cap, 64, fitted to an eighth of (256 - 64) descriptors: 24.
  assert.ok(held <= 24 + 2, `the flood holds ${held} descriptors`);
});

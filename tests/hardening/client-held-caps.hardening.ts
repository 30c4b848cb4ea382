/**
 * One client could hold the router-wide caps cheaply: an idle keep-alive
 * socket counted toward `admission.maxConnections` for the whole keep-alive
 * timeout (650 s), and a body trickled a byte at a time held an in-flight
 * slot for the whole request timeout (300 s). Now idle connections make room
 * for newcomers at the cap, bodies slower than the minimum rate get 408, and
 * an optional per-client-address connection limit answers 429.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { waitForModels } from '../kit/processes.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startRouterProcess, type RouterProcess } from '../kit/harness.ts';

const MODEL = 'caps-model';
const CHAT = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

async function withRouter(flags: string[], run: (base: string, router: RouterProcess) => Promise<void>): Promise<void> {
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0 } });
  await engine.listen();
  const router = await startRouterProcess([
    '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, '--lifecycle-pre-stop-delay-ms', '0', ...flags,
  ]);
  const base = `http://127.0.0.1:${router.traffic}`;
  try {
    await waitForModels(base);
    await run(base, router);
  } finally {
    router.child.kill('SIGKILL');
    await router.exit;
    await engine.close();
  }
}

/** Opens a keep-alive connection, sends one request on it and leaves it idle. */
function idleKeepAlive(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /livez HTTP/1.1\r\nhost: router\r\n\r\n');
    });
    socket.once('data', () => resolve(socket));
    socket.on('error', () => {});
    socket.once('close', () => reject(new Error('closed before answering')));
  });
}

test('regression: idle keep-alive sockets held the connection cap for 650 s; now a newcomer at the cap evicts the longest-idle one', async () => {
  await withRouter(['--admission-max-connections', '20'], async (base, router) => {
    const idle: Socket[] = [];
    for (let i = 0; i < 20; i++) idle.push(await idleKeepAlive(router.traffic));
    const answer = await postJson(`${base}/v1/chat/completions`, CHAT);
    assert.equal(answer.status, 200, answer.body.toString());
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(idle[0]?.destroyed, true, 'the longest-idle connection was closed');
    for (const socket of idle) socket.destroy();
  });
});

test('regression: a body trickled a byte at a time held an in-flight slot for 300 s; now it gets 408 once it falls below the minimum rate', async () => {
  await withRouter(['--server-min-body-bytes-per-second', '1024', '--server-body-rate-grace-ms', '1000'], async (base) => {
    const started = performance.now();
    const outcome = await new Promise<{ status: number; connection: string | undefined; code: string }>((resolve, reject) => {
      const req = request(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100000' }, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => {
          clearInterval(trickle);
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, code: body });
        });
      });
      req.on('error', reject);
      req.write('{"model":"caps-model","messages":[');
      const trickle = setInterval(() => req.write(' '), 200);
      setTimeout(() => reject(new Error('no answer within 8 s')), 8_000).unref();
    });
    assert.equal(outcome.status, 408);
    assert.equal(outcome.connection, 'close');
    assert.match(outcome.code, /SWITCHYARD_REQUEST_TIMEOUT/);
    assert.ok(performance.now() - started < 4_000);
  });
});

test('regression: one client address could take every connection; with a per-client limit its extra connections get 429 and close', async () => {
  await withRouter(['--server-max-connections-per-client', '2'], async (base, router) => {
    const held = [await idleKeepAlive(router.traffic), await idleKeepAlive(router.traffic)];
    const over = await postJson(`${base}/v1/chat/completions`, CHAT);
    assert.equal(over.status, 429);
    assert.equal(over.headers.connection, 'close');
    assert.ok(Number(over.headers['retry-after']) >= 1);
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await postJson(`${base}/v1/chat/completions`, CHAT)).status, 200);
  });
});

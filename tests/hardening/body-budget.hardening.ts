/**
 * Buffered request bodies used to have no router-wide budget: each request
 * buffered up to `server.maxBodyBytes` (32 MiB) before admission, and the
 * caps counted requests, not bytes. Twelve connections each sending 33 MB
 * raised RSS by 376 MB and held it for minutes; a few dozen OOM-kill a
 * 1-2 GiB pod. Now bytes are reserved before they are buffered: a declared
 * body that does not fit is refused at once, a chunked one as soon as its
 * next chunk does not fit, with 429 and the connection closed, and the
 * budget comes back when the requests holding it end.
 */
import assert from 'node:assert/strict';
import { request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { waitForModels } from '../kit/processes.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, send, startRouterProcess } from '../kit/harness.ts';

const MiB = 1024 * 1024;

/** Starts a chunked upload and resolves once `bytes` were written and the router took them (or answered). */
function trickle(base: string, bytes: number): { req: ClientRequest; answer: Promise<{ status: number; connection: string | undefined; body: string }> } {
  const req = request(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, agent: false });
  const answer = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', () => resolve({ status: 0, connection: undefined, body: '' }));
  });
  req.write('{"model":"budget-model","messages":[{"role":"user","content":"');
  req.write('x'.repeat(bytes));
  return { req, answer };
}

test('regression: bodies were buffered without a byte budget; now a body over the budget gets 429 and its connection closes, and the budget returns when requests end', async () => {
  const engine = new EngineSimulator({ model: 'budget-model', knobs: { ttftMs: 0, itlMs: 0 } });
  await engine.listen();
  const router = await startRouterProcess([
    '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, '--lifecycle-pre-stop-delay-ms', '0',
    '--server-body-budget-bytes', String(8 * MiB),
  ]);
  const base = `http://127.0.0.1:${router.traffic}`;
  try {
    await waitForModels(base);
    // Two unfinished chunked uploads of 3 MiB hold 6 MiB of the 8 MiB budget.
    const holders = [trickle(base, 3 * MiB), trickle(base, 3 * MiB)];
    await new Promise((resolve) => setTimeout(resolve, 500));

    // A declared 3 MiB body cannot fit: refused before a byte of it is buffered.
    const declared = await send(`${base}/v1/chat/completions`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'budget-model', messages: [{ role: 'user', content: 'y'.repeat(3 * MiB) }] }),
    });
    assert.equal(declared.status, 429);
    assert.ok(Number(declared.headers['retry-after']) >= 1);
    assert.match(declared.body.toString(), /SWITCHYARD_BODY_BUDGET/);
    assert.equal(declared.headers.connection, 'close');

    // A chunked body is refused mid-body, as soon as it passes what is left.
    const third = trickle(base, 3 * MiB);
    const refused = await third.answer;
    assert.equal(refused.status, 429);
    assert.equal(refused.connection, 'close');

    // Small requests still fit in what is left.
    assert.equal((await postJson(`${base}/v1/chat/completions`, { model: 'budget-model', messages: [{ role: 'user', content: 'hi' }] })).status, 200);

    // The holders finish: the budget comes back and a large body goes through.
    for (const holder of holders) holder.req.end('"}]}');
    for (const holder of holders) assert.equal((await holder.answer).status, 200);
    const after = await postJson(`${base}/v1/chat/completions`, { model: 'budget-model', messages: [{ role: 'user', content: 'z'.repeat(3 * MiB) }] });
    assert.equal(after.status, 200);
    const metrics = (await send(`http://127.0.0.1:${router.admin}/metrics`, { method: 'GET' })).body.toString();
    assert.match(metrics, /switchyard_shed_total\{reason="body_budget",priority="normal"\} 2/);
    assert.match(metrics, /switchyard_buffered_body_bytes 0\b/);
  } finally {
    router.child.kill('SIGKILL');
    await router.exit;
    await engine.close();
  }
});

/**
 * Sends a declared `bytes` body as fast as the connection takes it and
 * reports what the client saw: the answer's status line, and whether a
 * write failed (the reset that hides an early answer).
 */
function sendWhileAnswered(port: number, bytes: number): Promise<{ statusLine: string; writeError: string | undefined }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let writeError: string | undefined;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (writeError ??= err.code ?? err.message));
    socket.on('close', () => resolve({ statusLine: received.split('\r\n')[0] ?? '', writeError }));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: router\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < bytes && !socket.destroyed) {
        const size = Math.min(chunk.length, bytes - sent);
        sent += size;
        if (!socket.write(chunk.subarray(0, size))) return void socket.once('drain', pump);
      }
      if (!socket.destroyed) socket.end();
    };
    pump();
  });
}

test('regression: a client still sending its body got a reset instead of the early 413 or 429; now the close lingers until the client is done', async () => {
  const engine = new EngineSimulator({ model: 'budget-model', knobs: { ttftMs: 0, itlMs: 0 } });
  await engine.listen();
  const router = await startRouterProcess([
    '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, '--lifecycle-pre-stop-delay-ms', '0',
    '--server-max-body-bytes', String(16 * MiB), '--server-body-budget-bytes', String(8 * MiB),
  ]);
  try {
    await waitForModels(`http://127.0.0.1:${router.traffic}`);
    const tooLarge = await sendWhileAnswered(router.traffic, 24 * MiB);
    assert.deepEqual(tooLarge, { statusLine: 'HTTP/1.1 413 Payload Too Large', writeError: undefined });
    const overBudget = await sendWhileAnswered(router.traffic, 12 * MiB);
    assert.deepEqual(overBudget, { statusLine: 'HTTP/1.1 429 Too Many Requests', writeError: undefined });
  } finally {
    router.child.kill('SIGKILL');
    await router.exit;
    await engine.close();
  }
});

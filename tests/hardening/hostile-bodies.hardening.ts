/**
 * Bodies built to cost the router CPU and memory. Nesting depth used to be
 * checked after `JSON.parse` of bodies up to 32 MiB: one deeply nested body
 * cost 4-7 s of main-thread CPU and ~600 MB of heap, three stalled the event
 * loop for 18 s (the kubelet restarts a pod whose /livez fails that long), a
 * depth-3 body of the same size stalled the loop 3 s and was then forwarded,
 * and a multipart body with a tiny boundary stalled it 2 s. The body is now
 * scanned as it arrives: the event loop must keep answering throughout.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { deeplyNestedBody, manySmallArraysBody, tinyBoundaryMultipartBody } from '../kit/hostile-bodies.ts';
import { waitForModels } from '../kit/processes.ts';
import { send, startRouterProcess, type RouterProcess } from '../kit/harness.ts';

const MiB = 1024 * 1024;
const SIZE = 32 * MiB - 1024;

/** Samples how long the main loop takes to answer the traffic port's /livez (ms), until stopped. */
function sampleMainLoop(base: string): { stop: () => Promise<number> } {
  let worst = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await send(`${base}/livez`, { method: 'GET' });
      worst = Math.max(worst, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return worst;
    },
  };
}

/**
 * An engine that reads request bodies without parsing them and counts them. The simulator would
 * parse a 32 MiB body on the test's own event loop and distort the latency this file measures.
 */
class SinkEngine {
  requests = 0;
  readonly server: Server = createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'hostile-model', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST') {
      res.end(); // an empty exposition for /metrics: no load known, nothing else to report
      return;
    }
    req.resume();
    req.on('end', () => {
      this.requests++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'chatcmpl-sink', object: 'chat.completion', choices: [] }));
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function withRouter(run: (router: RouterProcess, engine: SinkEngine) => Promise<void>): Promise<void> {
  const engine = new SinkEngine();
  const url = await engine.listen();
  const router = await startRouterProcess([
    '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', url, '--lifecycle-pre-stop-delay-ms', '0',
  ]);
  try {
    await waitForModels(`http://127.0.0.1:${router.traffic}`);
    await run(router, engine);
  } finally {
    router.child.kill('SIGKILL');
    await router.exit;
    await engine.close();
  }
}

const post = (base: string, body: Buffer, contentType = 'application/json') =>
  send(`${base}/v1/chat/completions`, { headers: { 'content-type': contentType }, body });

test('regression: three 32 MiB deeply nested bodies stalled the event loop for seconds; now each is refused at its first bracket too deep', async (t) => {
  await withRouter(async (router) => {
    const base = `http://127.0.0.1:${router.traffic}`;
    const body = deeplyNestedBody(SIZE, 'hostile-model');
    const probe = sampleMainLoop(base);
    const started = performance.now();
    const answers = await Promise.all([post(base, body), post(base, body), post(base, body)]);
    const elapsedMs = performance.now() - started;
    const worstMs = await probe.stop();
    t.diagnostic(`worst main-loop /livez answer: ${worstMs.toFixed(1)} ms`);
    for (const answer of answers) {
      assert.equal(answer.status, 400);
      assert.match(answer.body.toString(), /SWITCHYARD_NESTING_TOO_DEEP/);
    }
    assert.ok(worstMs < 1_000, `main loop answered /livez in ${worstMs.toFixed(0)} ms at worst`);
    assert.ok(elapsedMs < 10_000, `took ${elapsedMs.toFixed(0)} ms`);
    assert.equal(router.child.exitCode, null);
  });
});

test('regression: a 32 MiB body of small arrays stalled the event loop 3 s; now it is scanned in slices while the loop keeps answering', async (t) => {
  await withRouter(async (router, engine) => {
    const base = `http://127.0.0.1:${router.traffic}`;
    const body = manySmallArraysBody(SIZE, 'hostile-model'); // built first: building it stalls this process, not the router
    const probe = sampleMainLoop(base);
    const answer = await post(base, body);
    const worstMs = await probe.stop();
    t.diagnostic(`worst main-loop /livez answer: ${worstMs.toFixed(1)} ms`);
    assert.equal(answer.status, 200, answer.body.toString().slice(0, 200));
    assert.ok(worstMs < 1_000, `main loop answered /livez in ${worstMs.toFixed(0)} ms at worst`);
    assert.equal(engine.requests, 1, 'the valid body reached the engine');
  });
});

test('regression: a multipart body with a tiny boundary repeated throughout stalled the event loop 2 s; now it is refused after a bounded look', async (t) => {
  await withRouter(async (router) => {
    const base = `http://127.0.0.1:${router.traffic}`;
    const body = tinyBoundaryMultipartBody(SIZE);
    const probe = sampleMainLoop(base);
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/v1/audio/transcriptions`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=a' }, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
    const worstMs = await probe.stop();
    t.diagnostic(`worst main-loop /livez answer: ${worstMs.toFixed(1)} ms`);
    assert.equal(answer, 400);
    assert.ok(worstMs < 1_000, `main loop answered /livez in ${worstMs.toFixed(0)} ms at worst`);
  });
});

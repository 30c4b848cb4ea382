import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { waitForModels } from '../kit/processes.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { sseData, startRouterProcess } from '../kit/harness.ts';

const MODEL = 'm-drain';

describe('SIGTERM drain', () => {
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 5, itlMs: 20, outputTokens: 60 } });
  before(() => engine.listen());
  after(() => engine.close());

  it('fails readiness at once, finishes an in-flight stream, stops accepting, and exits 0', async () => {
    const router = await startRouterProcess([
      '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url,
      '--lifecycle-pre-stop-delay-ms', '400', '--lifecycle-drain-timeout-ms', '10000', '--log-level', 'info',
    ]);
    const base = `http://127.0.0.1:${router.traffic}`;
    const admin = `http://127.0.0.1:${router.admin}`;
    await waitForModels(base);
    assert.equal((await fetch(`${admin}/readyz`)).status, 200);

    const streamDone = new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest(`${base}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        let signalled = false;
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (!signalled) {
            signalled = true;
            router.child.kill('SIGTERM');
          }
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: MODEL, stream: true, messages: [] }));
    });

    // Readiness fails at once, while traffic is still served during the pre-stop delay.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await fetch(`${admin}/readyz`)).status, 503);
    assert.equal((await fetch(`${base}/health`)).status, 503, "vLLM's health route on the traffic port follows readiness");
    assert.equal((await fetch(`${base}/v1/models`)).status, 200, 'still serving during the pre-stop delay');

    const body = await streamDone;
    assert.equal(sseData(body).at(-1), '[DONE]', 'the in-flight stream completed across SIGTERM');
    // The pre-stop delay has passed (the stream lasts > 1 s): new connections are refused.
    await assert.rejects(fetch(`${base}/v1/models`));
    assert.equal(await router.exit, 0);
  });
});

/**
 * Static backends behind a gateway path prefix: a real nginx (the test kit's pinned wheel) serves
 * the engine under /engine-a/, and the router reaches it as `--backend http://gw/engine-a`. The
 * OpenAI `base_url` habit, `http://host:8000/v1`, is refused at start instead (router/config).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nginxFrame, runNginx, type Nginx } from '../../loadtest/scenarios/baselines/nginx.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, send, startInProcessRouter, waitFor, type StartedRouter } from '../kit/harness.ts';

describe('a backend behind a gateway path prefix', () => {
  let engine: EngineSimulator;
  let gateway: Nginx;
  let router: StartedRouter;

  before(async () => {
    engine = new EngineSimulator({ model: 'prefixed', knobs: { ttftMs: 0, itlMs: 0, outputTokens: 3 } });
    await engine.listen();
    gateway = await runNginx(
      (dir, port) =>
        nginxFrame(
          { dir, workerConnections: 64 },
          `  proxy_temp_path ${dir}/proxy;
  server {
    listen 127.0.0.1:${port};
    location /engine-a/ {
      proxy_pass ${engine.url}/;
      proxy_http_version 1.1;
      proxy_buffering off;
    }
    location / { return 404; }
  }
`,
        ),
      'a gateway serving one engine under /engine-a/',
    );
    router = await startInProcessRouter(['--backend', `${gateway.url}/engine-a`], 1);
  });

  after(async () => {
    await router?.router.close();
    await gateway?.stop();
    await engine?.close();
  });

  it('learns the models, scrapes the metrics and serves requests through the prefix', async () => {
    const models = JSON.parse((await send(`${router.base}/v1/models`, { method: 'GET' })).body.toString('utf8')) as { data: { id: string }[] };
    assert.deepEqual(models.data.map((m) => m.id), ['prefixed']);
    const served = engine.requests;
    for (let i = 0; i < 3; i++) assert.equal((await postJson(`${router.base}/v1/chat/completions`, { model: 'prefixed', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
    assert.equal(engine.requests - served, 3);
    const state = [...router.router.view.all()][0];
    assert.equal(state?.basePath, '/engine-a');
    await waitFor(() => state?.scraped !== undefined, 5_000); // the engine's /metrics, through the prefix
  });
});

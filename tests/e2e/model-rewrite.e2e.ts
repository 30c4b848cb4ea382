/**
 * Model rewrites from the config file (InferenceModelRewrite's rules without a
 * cluster): a real router over real engine simulators, each serving only its
 * target model, so a 200 proves the engine got the rewritten model in the body.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startInProcessRouter, waitFor, type StartedRouter } from '../kit/harness.ts';

/** Lines written to a stream, parsed as JSON. */
class JsonLines extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') this.lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  }
}

const REWRITES = [
  { name: 'catch-all', rules: [{ targets: [{ modelRewrite: 'chat-v1' }] }] },
  { name: 'canary', rules: [{ matches: [{ model: { value: 'chat' } }], targets: [{ modelRewrite: 'chat-v1', weight: 90 }, { modelRewrite: 'chat-v2', weight: 10 }] }] },
];

describe('model rewrites from the config file', () => {
  const engines: EngineSimulator[] = [];
  let router: StartedRouter;
  const access = new JsonLines();

  before(async () => {
    for (const model of ['chat-v1', 'chat-v2']) {
      const engine = new EngineSimulator({ model, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 1 } });
      await engine.listen();
      engines.push(engine);
    }
    const config = join(mkdtempSync(join(tmpdir(), 'switchyard-rewrite-')), 'config.json');
    writeFileSync(config, JSON.stringify({ inferenceExtension: { modelRewrites: REWRITES } }));
    router = await startInProcessRouter(['--config', config, '--access-log', 'json', ...engines.flatMap((e) => ['--backend', e.url])], 2, { accessLogOut: access });
  });
  after(async () => {
    await router?.router.close();
    await Promise.all(engines.map((e) => e.close()));
  });

  const ask = (model: string, headers: Record<string, string> = {}) => postJson(`${router.base}/v1/chat/completions`, { model, messages: [{ role: "user", content: "hi" }] }, headers).then((r) => ({ status: r.status, body: r.body.toString() }));
  const answeredAs = (body: string) => (JSON.parse(body) as { model: string }).model;

  it('sends the request as the target, which the engine answers as; the access log names both and the rule', async () => {
    const response = await ask('chat', { 'x-request-id': 'rewrite-1', 'x-session-id': 'conversation-1' });
    assert.equal(response.status, 200, response.body);
    const target = answeredAs(response.body);
    assert.ok(target === 'chat-v1' || target === 'chat-v2');
    await waitFor(() => access.lines.some((l) => l['requestId'] === 'rewrite-1'));
    const line = access.lines.find((l) => l['requestId'] === 'rewrite-1');
    assert.deepEqual([line?.['model'], line?.['requestedModel'], line?.['rewrite']], [target, 'chat', 'config/canary']);
  });

  it('a session key keeps its target; distinct keys split 90/10 (±3% over 1,000)', async () => {
    const first = answeredAs((await ask('chat', { 'x-session-id': 'steady' })).body);
    for (let i = 0; i < 5; i++) assert.equal(answeredAs((await ask('chat', { 'x-session-id': 'steady' })).body), first);
    let canary = 0;
    for (let batch = 0; batch < 50; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => ask('chat', { 'x-session-id': `user-${batch}-${i}` })));
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        if (answeredAs(answer.body) === 'chat-v2') canary++;
      }
    }
    assert.ok(Math.abs(canary / 1_000 - 0.1) <= 0.03, `canary share ${canary / 1_000}`);
  });

  it('an exact rule beats the older generic one; the generic one catches every other model', async () => {
    const other = await ask('anything-else');
    assert.equal(other.status, 200, other.body);
    assert.equal(answeredAs(other.body), 'chat-v1');
    const debug = (await (await fetch(`${router.admin}/debug/endpoints`)).json()) as { inferenceExtension: { rewrites: { id: string }[] } };
    assert.deepEqual(debug.inferenceExtension.rewrites.map((r) => r.id), ['config/catch-all', 'config/canary']);
    const metrics = await (await fetch(`${router.admin}/metrics`)).text();
    assert.match(metrics, /switchyard_model_rewrites_total\{rewrite="config\/catch-all",target="chat-v1"\} 1\b/);
  });
});

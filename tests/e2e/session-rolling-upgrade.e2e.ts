/**
 * Rolling upgrade to tenant-scoped session names: replicas of the previous
 * release stored `session:<SHA-256 of the key>` in Redis. A new replica that
 * finds nothing under a session's new name reads that old entry once, sends
 * the request to the engine it names (where the conversation's KV cache is),
 * and stores it under the new name; the old entry is never written.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, servedBy, startInProcessRouter, waitForSharedStateUp, type StartedRouter } from '../kit/harness.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';

const MODEL = 'm-session-upgrade';
const SESSIONS = ['conv-upgrade-0', 'conv-upgrade-1', 'conv-upgrade-2', 'conv-upgrade-3'];

describe('rolling upgrade of session names', () => {
  let redis: RedisServer;
  const engines: EngineSimulator[] = [];
  let router: StartedRouter;

  before(async () => {
    redis = await startRedisServer();
    for (let i = 0; i < 2; i++) {
      const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 2 } });
      await engine.listen();
      engines.push(engine);
    }
    router = await startInProcessRouter([...engines.flatMap((e) => ['--backend', e.url]), '--redis-url', redis.url, '--sessions-local-cache-ms', '0'], engines.length);
    await waitForSharedStateUp(router.admin);
  });
  after(async () => {
    await router.router.close();
    await Promise.all(engines.map((e) => e.close()));
    await redis.stop();
  });

  it("keeps each conversation on the engine the previous release stored, and stores it under the new name", async () => {
    // What replicas of the previous release wrote: alternate engines, so load alone would not explain where requests go.
    const legacy = SESSIONS.map((session) => `switchyard:session:${createHash('sha256').update(session).digest('base64url')}`);
    for (const [i] of SESSIONS.entries()) await redis.command('SET', legacy[i] as string, (engines[i % 2] as EngineSimulator).url);
    for (let turn = 0; turn < 2; turn++) {
      for (const [i, session] of SESSIONS.entries()) {
        const id = `upgrade-${turn}-${i}`;
        const answer = await postJson(`${router.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, { 'x-session-id': session, 'x-request-id': id });
        assert.equal(answer.status, 200, answer.body.toString('utf8'));
        assert.equal(servedBy(engines, id), i % 2, `${session}, turn ${turn}`);
      }
    }
    const renamed = (await redis.command('--scan', '--pattern', 'switchyard:session-v2:*')).split('\n').filter((key) => key !== '');
    assert.equal(renamed.length, SESSIONS.length, 'each session stored under its new name');
    assert.deepEqual((await Promise.all(renamed.map((key) => redis.command('GET', key)))).sort(), SESSIONS.map((_, i) => (engines[i % 2] as EngineSimulator).url).sort());
    assert.deepEqual(await Promise.all(legacy.map((key) => redis.command('GET', key))), SESSIONS.map((_, i) => (engines[i % 2] as EngineSimulator).url), 'the old entries are left as they were, to expire');
  });
});

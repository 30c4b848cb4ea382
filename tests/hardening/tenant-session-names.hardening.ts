/**
 * Sessions shared one namespace across tenants and models: Redis held
 * `session:<SHA-256 of the key>`. The same `x-session-id` from two tenants
 * (or one client's chat and embeddings models sharing `user`) was one
 * session, so each request for the other model found the stored engine
 * serving the wrong model and moved the session: 5 moves in 6 requests, each
 * losing the KV cache. And the unsalted digest of a low-entropy key (a user
 * id, an e-mail) could be reversed by anyone who reads Redis, by hashing
 * guesses. Sessions are now named by HMAC(install secret, tenant, model,
 * key): two tenants are two sessions (0 moves), and Redis holds no plain
 * digest of the key.
 *
 * Two real router processes share a real redis-server; each tenant's model
 * is served by its own engine; the requests alternate tenants and routers.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { waitForSharedStateUp } from '../kit/harness.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { startRouter, type RouterProcess } from '../kit/router-process.ts';

const KEY_A = 'sk-names-tenant-a-0c7f3a91';
const KEY_B = 'sk-names-tenant-b-5e21d4b8';
const MODEL_A = 'm-names-chat';
const MODEL_B = 'm-names-embed';
/** A low-entropy session key, as `user` often is. */
const SESSION = 'alice@example.com';
const REQUESTS = 6;

let dir: string;
let redis: RedisServer;
let engines: EngineSimulator[] = [];
let routers: RouterProcess[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-names-'));
  const keys = join(dir, 'keys.yaml');
  writeFileSync(keys, `tenants:\n  team-a: {}\n  team-b: {}\nkeys:\n  - key: ${KEY_A}\n    tenant: team-a\n  - key: ${KEY_B}\n    tenant: team-b\n`);
  redis = await startRedisServer();
  engines = [new EngineSimulator({ model: MODEL_A, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 2 } }), new EngineSimulator({ model: MODEL_B, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 2 } })];
  for (const engine of engines) await engine.listen();
  const args = [
    ...engines.flatMap((engine) => ['--backend', engine.url]),
    '--auth-api-keys-file', keys,
    '--redis-url', redis.url,
    // Every lookup asks Redis, so what one router stored is what the other reads at once.
    '--sessions-local-cache-ms', '0',
  ];
  routers = await Promise.all([startRouter(args), startRouter(args)]);
  for (const router of routers) await waitForSharedStateUp(router.admin);
});
after(async () => {
  await Promise.all(routers.map((router) => router.stop()));
  await Promise.all(engines.map((engine) => engine.close()));
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The sum of `name`'s series on `admin`'s /metrics. */
async function metricSum(admin: string, name: string): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** POSTs one chat request as `key` for `model` with the shared session id, through `router`, until the engines know the models. */
async function chat(router: RouterProcess, key: string, model: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    const answer = await fetch(`${router.traffic}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-session-id': SESSION },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const text = await answer.text();
    if (answer.status === 200) return;
    // A router that has not probed the engines' models yet says 404: not the finding, try again.
    assert.ok(answer.status === 404 && tries < 100, `${answer.status} ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('regression: the same x-session-id from two tenants moved the session on every request (5 moves in 6), and Redis held its plain SHA-256', async () => {
  const movesBefore = (await Promise.all(routers.map((router) => metricSum(router.admin, 'switchyard_session_moves_total')))).reduce((a, b) => a + b, 0);
  for (let i = 0; i < REQUESTS; i++) {
    const asA = i % 2 === 0;
    await chat(routers[Math.floor(i / 2) % 2] as RouterProcess, asA ? KEY_A : KEY_B, asA ? MODEL_A : MODEL_B);
  }
  const moves = (await Promise.all(routers.map((router) => metricSum(router.admin, 'switchyard_session_moves_total')))).reduce((a, b) => a + b, 0) - movesBefore;
  assert.equal(moves, 0, `${moves} session moves in ${REQUESTS} requests`);
  assert.deepEqual(
    engines.map((engine) => engine.sessions.get(SESSION)),
    [REQUESTS / 2, REQUESTS / 2],
    "each tenant's conversation stayed on its own engine",
  );

  const keys = (await redis.command('--scan')).split('\n').filter((key) => key !== '');
  const sessionKeys = keys.filter((key) => key.includes('session'));
  assert.equal(sessionKeys.length, 2, `one stored session per tenant: ${JSON.stringify(sessionKeys)}`);
  const digest = createHash('sha256').update(SESSION).digest();
  for (const plain of [digest.toString('base64url'), digest.toString('hex'), digest.toString('base64'), SESSION]) {
    assert.ok(!keys.some((key) => key.includes(plain)), `no Redis key holds ${plain}`);
  }
});

/**
 * The store against a real Redis-compatible server that wants a password.
 * The documented ACL has its own test (acl.test.ts); TLS has its own suite
 * (tests/redis-tls/, npm run test:redis-tls), since it needs a server built
 * with TLS.
 * A wrong credential must cost what an outage costs: degraded, commands
 * answered `undefined` at once, nothing thrown, and no end to the reconnects.
 * Sentinel and Cluster have their own, longer suites (*.hardening.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LuaScript, type SharedStore } from './shared-store.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { during, recorder, staysDegraded, storeFor, until } from '../../tests/kit/redis/store-fixture.ts';

const PASSWORD = 'correct-horse-battery';
const COMMAND_TIMEOUT_MS = 50;

/** Asks Redis every 50 ms, as the router's fleet publisher does, until the store is up. */
async function untilUpWhileAsking(store: SharedStore, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (store.status !== 'up') {
    if (Date.now() > deadline) throw new Error(`not up after ${timeoutMs} ms`);
    await store.run('ping', (c) => c.ping());
    await during(50);
  }
}

describe('shared store with a password against a real server', () => {
  let dir: string;
  let server: RedisServer;
  const secret = (name: string, value: string) => {
    const path = join(dir, name);
    writeFileSync(path, value + '\n', { mode: 0o600 });
    return path;
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-secrets-'));
    server = await startRedisServer({ password: PASSWORD });
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the right password (from passwordFile) connects, and commands and scripts run', async () => {
    const observer = recorder();
    const store = storeFor({ url: server.url, passwordFile: secret('right', PASSWORD), commandTimeoutMs: COMMAND_TIMEOUT_MS }, observer);
    try {
      await until(() => store.status === 'up', 5_000);
      assert.equal(await store.run('set', (c) => c.set(store.key('k'), 'v')), 'OK');
      assert.equal(await store.script(new LuaScript('get', "return redis.call('GET', KEYS[1])"), [store.key('k')], []), 'v');
      assert.deepEqual(observer.failures, []);
    } finally {
      await store.close();
    }
  });

  it('a wrong password is degraded for good: commands answer undefined at once, nothing throws, and it keeps trying', async () => {
    const admin = storeFor({ url: server.url, passwordFile: secret('admin', PASSWORD), commandTimeoutMs: 1_000 });
    const observer = recorder();
    const store = storeFor({ url: server.url, passwordFile: secret('wrong', 'not-the-password'), commandTimeoutMs: COMMAND_TIMEOUT_MS }, observer);
    try {
      await staysDegraded(store, observer, 1_200);
      // The reconnects never stop: once the server takes that password (a rotated secret), the store is up by itself.
      await until(() => admin.status === 'up', 5_000);
      assert.equal(await admin.run('config', (c) => c.config('SET', 'requirepass', 'not-the-password')), 'OK');
      // The failed commands opened the breaker; the router's periodic publish is the trial that closes it.
      await untilUpWhileAsking(store, 5_000);
      assert.deepEqual(observer.statuses, ['up']);
    } finally {
      await admin.run('config', (c) => c.config('SET', 'requirepass', PASSWORD));
      await Promise.all([store.close(), admin.close()]);
    }
  });

  it('no password against a server that requires one is degraded the same way', async () => {
    const observer = recorder();
    const store = storeFor({ url: server.url, commandTimeoutMs: COMMAND_TIMEOUT_MS }, observer);
    try {
      await staysDegraded(store, observer, 700);
    } finally {
      await store.close();
    }
  });
});

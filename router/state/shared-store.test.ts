import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import type { BreakerState } from './breaker.ts';
import { createRedisClient } from './redis-client.ts';
import { LuaScript, SharedStore, sharedStoreSettings, type CommandFailure, type SharedStoreObserver } from './shared-store.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { until } from '../../tests/kit/redis/store-fixture.ts';

function recorder(): SharedStoreObserver & { failures: CommandFailure[]; statuses: string[]; breaker: BreakerState[]; done: number } {
  const r = {
    failures: [] as CommandFailure[],
    statuses: [] as string[],
    breaker: [] as BreakerState[],
    done: 0,
    commandDone: () => void r.done++,
    commandFailed: (_: string, failure: CommandFailure) => void r.failures.push(failure),
    breakerMoved: (to: BreakerState) => void r.breaker.push(to),
    statusChanged: (status: string) => void r.statuses.push(status),
  };
  return r;
}

function storeFor(url: string, observer: SharedStoreObserver, extra: Record<string, unknown> = {}): SharedStore {
  const config = configSchema.parse({ redis: { url, commandTimeoutMs: 50, breakerFailures: 2, breakerOpenMs: 200, ...extra } });
  return new SharedStore(createRedisClient(config.redis, () => 'unused'), sharedStoreSettings(config.redis), observer);
}

describe('SharedStore against a real redis-server', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server.stop();
  });

  it('comes up, runs commands and scripts (loading a script the server lacks once)', async () => {
    const observer = recorder();
    const store = storeFor(server.url, observer);
    try {
      await until(() => store.status === 'up');
      assert.equal(await store.run('set', (c) => c.set(store.key('a'), '1')), 'OK');
      const script = new LuaScript('incr_twice', "redis.call('INCR', KEYS[1]); return redis.call('INCRBY', KEYS[1], ARGV[1])");
      assert.equal(await store.script(script, [store.key('n')], [5]), 6);
      assert.equal(await store.script(script, [store.key('n')], [5]), 12, 'second run by its SHA');
      assert.deepEqual(observer.failures, []);
      assert.deepEqual(observer.statuses, ['up']);
    } finally {
      await store.close();
    }
  });

  it('a slow Redis (DEBUG SLEEP) costs each request at most the command timeout, opens the breaker, and recovers by itself', async () => {
    const observer = recorder();
    const store = storeFor(server.url, observer);
    const admin = storeFor(server.url, recorder(), { commandTimeoutMs: 1000 });
    try {
      await until(() => store.status === 'up' && admin.status === 'up');
      // DEBUG SLEEP blocks the whole server; the admin connection's own answer arrives when it ends.
      const sleeping = admin.run('debug', (c) => c.call('DEBUG', 'SLEEP', '0.6'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const started = performance.now();
      assert.equal(await store.run('get', (c) => c.get(store.key('a'))), undefined);
      assert.equal(await store.run('get', (c) => c.get(store.key('a'))), undefined);
      const slowest = performance.now() - started;
      assert.ok(slowest < 2 * 50 + 60, `two commands took ${slowest.toFixed(0)} ms`);
      assert.deepEqual(observer.failures, ['timeout', 'timeout']);
      assert.equal(store.status, 'degraded');
      const skipped = performance.now();
      assert.equal(await store.run('get', (c) => c.get(store.key('a'))), undefined);
      assert.ok(performance.now() - skipped < 5, 'an open breaker answers at once');
      assert.equal(observer.failures.at(-1), 'breaker_open');
      await sleeping;
      // The breaker tries again after breakerOpenMs; the trial succeeds and it closes.
      await new Promise((resolve) => setTimeout(resolve, 250));
      assert.equal(await store.run('get', (c) => c.get(store.key('a'))), '1');
      assert.equal(store.status, 'up');
      assert.deepEqual(observer.statuses, ['up', 'degraded', 'up']);
      assert.deepEqual(observer.breaker, ['open', 'half-open', 'closed']);
    } finally {
      await Promise.all([store.close(), admin.close()]);
    }
  });

  it('an answer that arrived while the event loop was busy past the timeout is an answer, not a timeout', async () => {
    const observer = recorder();
    const store = storeFor(server.url, observer);
    try {
      await until(() => store.status === 'up');
      await store.run('set', (c) => c.set(store.key('busy'), 'answered'));
      for (let round = 0; round < 3; round++) {
        const pending = store.run('get', (c) => c.get(store.key('busy')));
        // The loop is held (as by a burst of connections on a small host) for 3× the 50 ms timeout; the
        // loopback reply lands in the socket meanwhile, and the timer is overdue when the loop comes back.
        const heldUntil = performance.now() + 150;
        while (performance.now() < heldUntil);
        assert.equal(await pending, 'answered');
      }
      assert.deepEqual(observer.failures, []);
      assert.equal(store.status, 'up');
    } finally {
      await store.close();
    }
  });

  it('a killed Redis fails commands at once (no offline queue), and a restarted empty one is used again', async () => {
    const observer = recorder();
    const store = storeFor(server.url, observer);
    try {
      await until(() => store.status === 'up');
      await server.kill();
      await until(() => store.status === 'degraded');
      const started = performance.now();
      assert.equal(await store.run('get', (c) => c.get(store.key('a'))), undefined);
      assert.ok(performance.now() - started < 20, 'no wait for a reconnect');
      assert.equal(observer.failures.at(-1), 'connection');
      await server.restart();
      await until(() => store.status === 'up', 5_000);
      assert.equal(await store.run('get', (c) => c.get(store.key('a'))), null, 'restarted empty');
    } finally {
      await store.close();
    }
  });

  it('an error reply from a live Redis (OOM at its memory cap) fails that command only: the breaker stays closed', async () => {
    const capped = await startRedisServer({ config: ['maxmemory 2mb', 'maxmemory-policy noeviction'] });
    const observer = recorder();
    const store = storeFor(capped.url, observer);
    try {
      await until(() => store.status === 'up');
      // Fill Redis to its cap, as a flood of client-created session keys did.
      assert.equal(await store.run('fill', (c) => c.call('DEBUG', 'POPULATE', '64', store.key('fill'), String(64 * 1024))), 'OK');
      const before = observer.failures.length;
      for (let i = 0; i < 20; i++) assert.equal(await store.run('session_set', (c) => c.set(store.key(`s:${i}`), 'e1')), undefined);
      assert.deepEqual(new Set(observer.failures.slice(before)), new Set(['server']), 'each refused write is counted');
      assert.deepEqual(observer.breaker, [], 'the breaker never moved');
      assert.equal(store.status, 'up');
      assert.equal((await store.run('get', (c) => c.get(store.key('fill:0'))))?.length, 64 * 1024, 'reads are still answered');
      // A reply that the caller does not accept is no answer, counted apart, and not a breaker failure either.
      assert.equal(await store.run('get', (c) => c.get(store.key('fill:0')), (reply) => (reply !== null && reply.length <= 512 ? reply : undefined)), undefined);
      assert.equal(observer.failures.at(-1), 'invalid_reply');
      assert.deepEqual(observer.breaker, []);
    } finally {
      await store.close();
      await capped.stop();
    }
  });

  it('an error reply that says the server cannot serve (LOADING, BUSY, ...) still counts toward the breaker', async () => {
    const observer = recorder();
    const store = storeFor(server.url, observer);
    try {
      await until(() => store.status === 'up');
      for (let i = 0; i < 2; i++) assert.equal(await store.run('probe', (c) => c.eval("return redis.error_reply('LOADING Redis is loading the dataset in memory')", 0)), undefined);
      assert.deepEqual(observer.breaker, ['open']);
      await until(() => store.status === 'degraded');
    } finally {
      await store.close();
    }
  });

  it('drops the connection when one reply passes 8 MiB, before it is buffered whole, and reconnects', async () => {
    const observer = recorder();
    const store = storeFor(server.url, observer, { commandTimeoutMs: 1_000 });
    try {
      await until(() => store.status === 'up');
      assert.equal(await store.run('debug', (c) => c.call('DEBUG', 'POPULATE', '1', store.key('huge'), String(64 * 1024 * 1024))), 'OK');
      const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
      assert.equal(await store.run('get', (c) => c.get(store.key('huge:0'))), undefined, 'no answer');
      const grown = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - heapBefore;
      assert.ok(grown < 32 * 1024 * 1024, `held ${grown} bytes more while reading a 64 MiB reply`);
      assert.ok(observer.failures.includes('invalid_reply'), 'counted as an invalid reply');
      await until(() => store.status === 'up', 5_000);
      assert.equal(await store.run('set', (c) => c.set(store.key('small'), 'v')), 'OK', 'the reconnected client works');
      await store.run('del', (c) => c.del(store.key('huge:0')));
    } finally {
      await store.close();
    }
  });
});

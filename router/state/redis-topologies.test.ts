/**
 * The store against a real redis-server that wants credentials: a password,
 * TLS (server-verified and mutual). The documented ACL has its own test
 * (acl.test.ts).
 * A wrong credential must cost what an outage costs: degraded, commands
 * answered `undefined` at once, nothing thrown, and no end to the reconnects.
 * Sentinel and Cluster have their own, longer suites (*.hardening.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePorts } from '../../tests/kit/free-ports.ts';
import { LuaScript, type SharedStore } from './shared-store.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { recorder, storeFor, until, type RecordingObserver } from '../../tests/kit/redis/store-fixture.ts';
import { makeTlsCerts, redisTlsConfig, type TlsCerts } from '../../tests/kit/redis/tls-certs.ts';

const PASSWORD = 'correct-horse-battery';
const COMMAND_TIMEOUT_MS = 50;
/** A refused command never waits for the network: no offline queue, no retry. Generous for a loaded CI machine. */
const AT_ONCE_MS = 25;

/** Waits `ms` of real time while the client tries to connect. */
const during = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Asserts the store stays degraded for `ms` (several reconnect attempts with
 * the 50 ms → 1 s backoff), answering every command `undefined` at once.
 */
async function staysDegraded(store: SharedStore, observer: RecordingObserver, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  let asked = 0;
  while (Date.now() < deadline) {
    const started = performance.now();
    assert.equal(await store.run('get', (c) => c.get(store.key('k'))), undefined);
    const took = performance.now() - started;
    assert.ok(took < AT_ONCE_MS, `a command took ${took.toFixed(1)} ms`);
    asked++;
    await during(50);
  }
  assert.equal(store.status, 'degraded');
  assert.deepEqual(observer.statuses, [], 'never reported up');
  assert.ok(asked >= 5 && observer.failures.length === asked, `${asked} commands, ${observer.failures.length} failures`);
}

/** Asks Redis every 50 ms, as the router's fleet publisher does, until the store is up. */
async function untilUpWhileAsking(store: SharedStore, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (store.status !== 'up') {
    if (Date.now() > deadline) throw new Error(`not up after ${timeoutMs} ms`);
    await store.run('ping', (c) => c.ping());
    await during(50);
  }
}

describe('shared store with credentials against a real redis-server', () => {
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

describe('shared store over TLS against a real redis-server (Debian builds it with TLS)', { concurrency: true }, () => {
  let certs: TlsCerts;
  /** TLS port of a server that verifies nothing of the client, and of one that requires a client certificate. */
  let serverTls: { server: RedisServer; port: number };
  let mutualTls: { server: RedisServer; port: number };
  const startTls = async (requireClientCert: boolean) => {
    const [port] = await freePorts(1);
    return { server: await startRedisServer({ config: redisTlsConfig(certs, port!, requireClientCert) }), port: port! };
  };
  before(async () => {
    certs = await makeTlsCerts();
    serverTls = await startTls(false);
    mutualTls = await startTls(true);
  });
  after(async () => {
    await Promise.all([serverTls.server.stop(), mutualTls.server.stop()]);
    certs.remove();
  });

  async function assertUp(redis: Record<string, unknown>): Promise<void> {
    const observer = recorder();
    const store = storeFor({ commandTimeoutMs: COMMAND_TIMEOUT_MS, ...redis }, observer);
    try {
      await until(() => store.status === 'up', 5_000);
      assert.equal(await store.run('set', (c) => c.set(store.key('k'), 'tls')), 'OK');
      assert.equal(await store.run('get', (c) => c.get(store.key('k'))), 'tls');
      assert.deepEqual(observer.failures, []);
    } finally {
      await store.close();
    }
  }

  async function assertDegraded(redis: Record<string, unknown>): Promise<void> {
    const observer = recorder();
    const store = storeFor({ commandTimeoutMs: COMMAND_TIMEOUT_MS, ...redis }, observer);
    try {
      await staysDegraded(store, observer, 700);
    } finally {
      await store.close();
    }
  }

  it('rediss:// with the CA in caFile connects', async () => {
    await assertUp({ url: `rediss://127.0.0.1:${serverTls.port}`, tls: { caFile: certs.caFile } });
  });

  it('redis:// with tls.enabled connects the same way', async () => {
    await assertUp({ url: `redis://127.0.0.1:${serverTls.port}`, tls: { enabled: true, caFile: certs.caFile } });
  });

  it('a server certificate the CA did not sign is refused: degraded, never up', async () => {
    await assertDegraded({ url: `rediss://127.0.0.1:${serverTls.port}`, tls: { caFile: certs.otherCaFile } });
  });

  it('a serverName the certificate does not name is refused', async () => {
    await assertDegraded({ url: `rediss://127.0.0.1:${serverTls.port}`, tls: { caFile: certs.caFile, serverName: 'redis.example' } });
  });

  it('mutual TLS: the client certificate (certFile, keyFile) is presented and accepted, with serverName', async () => {
    await assertUp({ url: `rediss://127.0.0.1:${mutualTls.port}`, tls: { caFile: certs.caFile, certFile: certs.clientCertFile, keyFile: certs.clientKeyFile, serverName: 'localhost' } });
  });

  it('mutual TLS without a client certificate is refused', async () => {
    await assertDegraded({ url: `rediss://127.0.0.1:${mutualTls.port}`, tls: { caFile: certs.caFile } });
  });
});

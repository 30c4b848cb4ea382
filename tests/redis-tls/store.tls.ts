/**
 * The store over TLS (server-verified and mutual) against a real
 * redis-server. Its own suite (npm run test:redis-tls) because the wheels
 * npm test takes its servers from (tests/kit/servers.ts) have no TLS build:
 * this one uses Debian's redis-server (built with TLS) and openssl for the
 * throw-away certificates, from the PATH; .ci/run installs both.
 * A wrong trust anchor or a missing client certificate must cost what an
 * outage costs: degraded, commands answered `undefined` at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePorts } from '../kit/free-ports.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { recorder, staysDegraded, storeFor, until } from '../kit/redis/store-fixture.ts';
import { makeTlsCerts, redisTlsConfig, type TlsCerts } from '../kit/redis/tls-certs.ts';

const COMMAND_TIMEOUT_MS = 50;

describe('shared store over TLS against a real redis-server', { concurrency: true }, () => {
  let certs: TlsCerts;
  /** TLS port of a server that verifies nothing of the client, and of one that requires a client certificate. */
  let serverTls: { server: RedisServer; port: number };
  let mutualTls: { server: RedisServer; port: number };
  const startTls = async (requireClientCert: boolean) => {
    const [port] = await freePorts(1);
    return { server: await startRedisServer({ binary: 'redis-server', config: redisTlsConfig(certs, port!, requireClientCert) }), port: port! };
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

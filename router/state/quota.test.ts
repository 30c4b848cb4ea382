/**
 * Tenant quotas against a real redis-server, with several TenantQuotas
 * instances (each with its own connection) standing for router replicas.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePorts } from '../../tests/kit/free-ports.ts';
import type { FleetMembership } from './fleet-membership.ts';
import { TenantQuotas, type QuotaOutcome, type TenantLimits } from './quota.ts';
import { concurrencyKeyName } from './quota-script.ts';
import type { SharedStore } from './shared-store.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { storeFor, until } from '../../tests/kit/redis/store-fixture.ts';

/** A fixed fleet: `ids` are alive, this replica is `id`. */
function fleet(id: string, ids: readonly string[]): FleetMembership {
  return { replicaId: id, liveReplicaIds: () => ids, liveReplicaCount: () => ids.length };
}

function quotas(store: SharedStore | undefined, membership: FleetMembership, extra: { checkTimeoutMs?: number; replicaTtlMs?: number; now?: () => number } = {}): TenantQuotas {
  return new TenantQuotas({
    shared: store === undefined ? undefined : { store, membership },
    checkTimeoutMs: extra.checkTimeoutMs ?? 250,
    replicaTtlMs: extra.replicaTtlMs ?? 2_000,
    ...(extra.now === undefined ? {} : { now: extra.now }),
  });
}

function admitted(outcome: QuotaOutcome): Extract<QuotaOutcome, { admitted: true }> {
  assert.equal(outcome.admitted, true, `refused: ${JSON.stringify(outcome)}`);
  return outcome;
}

let tenantSerial = 0;
/** A tenant name no other test uses (they share one Redis). */
const freshTenant = () => `tenant-${++tenantSerial}`;

describe('TenantQuotas against a real redis-server', () => {
  let server: RedisServer;
  let stores: SharedStore[];
  let admin: SharedStore;
  before(async () => {
    server = await startRedisServer();
    stores = [0, 1, 2].map(() => storeFor({ url: server.url, commandTimeoutMs: 250 }));
    admin = storeFor({ url: server.url, commandTimeoutMs: 1_000 });
    await until(() => [...stores, admin].every((s) => s.status === 'up'), 5_000);
  });
  after(async () => {
    await Promise.all([...stores, admin].map((s) => s.close()));
    await server.stop();
  });

  it('three replicas offered 100 req/s against a 50 req/s limit for 3 s admit 50 req/s (±10%)', async () => {
    const ids = ['r0', 'r1', 'r2'];
    const replicas = stores.map((store, i) => quotas(store, fleet(ids[i] as string, ids)));
    const tenant = freshTenant();
    const limits: TenantLimits = { requestsPerSecond: 50, burst: 5 };
    const offered = 300;
    const intervalMs = 10;
    const outcomes: Promise<QuotaOutcome>[] = [];
    const started = performance.now();
    let last = started;
    await new Promise<void>((resolve) => {
      let sent = 0;
      const next = () => {
        last = performance.now();
        outcomes.push((replicas[sent % 3] as TenantQuotas).acquire(tenant, limits));
        sent++;
        if (sent === offered) resolve();
        // Each request at its own point of the schedule, so timer drift does not pile up.
        else setTimeout(next, Math.max(0, started + sent * intervalMs - performance.now()));
      };
      next();
    });
    const results = await Promise.all(outcomes);
    const passed = results.filter((r) => r.admitted).length;
    const windowS = (last - started) / 1000;
    // GCRA admits the burst at once, then one request per 20 ms.
    const expected = 5 + 50 * windowS;
    assert.ok(results.every((r) => r.decidedBy === 'shared'), 'every check answered by Redis');
    assert.ok(Math.abs(passed - expected) <= 0.1 * expected, `admitted ${passed} over ${windowS.toFixed(2)} s, expected ${expected.toFixed(0)} ± 10%`);
    const refused = results.find((r) => !r.admitted);
    assert.equal(refused?.admitted === false && refused.limit, 'rate');
  });

  it('sums requests in progress over the live replicas, and gives a slot back exactly once', async () => {
    const ids = ['a', 'b'];
    const [a, b] = [quotas(stores[0], fleet('a', ids)), quotas(stores[1], fleet('b', ids))] as [TenantQuotas, TenantQuotas];
    const tenant = freshTenant();
    const limits: TenantLimits = { maxConcurrent: 3 };
    const first = admitted(await a.acquire(tenant, limits));
    admitted(await a.acquire(tenant, limits));
    admitted(await b.acquire(tenant, limits));
    const refused = await b.acquire(tenant, limits);
    assert.equal(refused.admitted, false);
    assert.equal(!refused.admitted && refused.limit, 'concurrency');
    assert.equal(!refused.admitted && refused.retryAfterMs, 1_000);
    assert.equal(b.held(tenant), 1, 'a refused request holds nothing');
    first.release();
    first.release();
    assert.equal(a.held(tenant), 1, 'a second release gives nothing back');
    // The release is fire-and-forget: the next check must go out on the releasing replica's connection,
    // behind it. (It went out on b's, and once in a CI run it reached Redis before the release did.)
    admitted(await a.acquire(tenant, limits));
    assert.equal((await b.acquire(tenant, limits)).admitted, false, 'one slot came back, not two');
  });

  it("a killed replica's requests in progress vanish with its heartbeat TTL; a live holder's stay", async () => {
    const ttl = 400;
    const ids = ['killed', 'live', 'other'];
    const killedStore = storeFor({ url: server.url, commandTimeoutMs: 250 });
    await until(() => killedStore.status === 'up', 5_000);
    const killed = quotas(killedStore, fleet('killed', ids), { replicaTtlMs: ttl });
    const live = quotas(stores[1], fleet('live', ids), { replicaTtlMs: ttl });
    const other = quotas(stores[2], fleet('other', ids), { replicaTtlMs: ttl });
    live.start();
    try {
      const tenant = freshTenant();
      const limits: TenantLimits = { maxConcurrent: 3 };
      admitted(await killed.acquire(tenant, limits));
      admitted(await killed.acquire(tenant, limits));
      admitted(await live.acquire(tenant, limits));
      assert.equal((await other.acquire(tenant, limits)).admitted, false);
      // Killed: it never releases, never refreshes, and its connection is gone.
      await killedStore.close();
      const killedKey = admin.key(concurrencyKeyName(tenant, 'killed'));
      const liveKey = admin.key(concurrencyKeyName(tenant, 'live'));
      const gone = performance.now();
      let exists = 1;
      while (exists === 1 && performance.now() - gone < 5_000) {
        exists = (await admin.run('exists', (c) => c.exists(killedKey))) ?? 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(exists, 0, "the killed replica's count expired");
      assert.ok(performance.now() - gone < ttl + 500, `expired after ${(performance.now() - gone).toFixed(0)} ms (TTL ${ttl} ms)`);
      admitted(await other.acquire(tenant, limits));
      admitted(await other.acquire(tenant, limits));
      assert.equal((await other.acquire(tenant, limits)).admitted, false, "the live holder's request still counts");
      // The holder rewrote its key at least once per quarter TTL, so it outlived several TTLs.
      await new Promise((resolve) => setTimeout(resolve, 2.5 * ttl));
      assert.equal(await admin.run('get', (c) => c.get(liveKey)), '1');
    } finally {
      live.stop();
    }
  });

  it('falls back to plain EVAL where EVALSHA is refused (an ACL user with -evalsha)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-quota-'));
    const acl = await startRedisServer({ config: ['user quota on >quota-secret ~* &* +@all -evalsha'] });
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, 'quota-secret\n');
    const store = storeFor({ url: acl.url, username: 'quota', passwordFile, commandTimeoutMs: 250 });
    try {
      await until(() => store.status === 'up', 5_000);
      const refusal = await store.run('probe', async (c) => {
        try {
          await c.evalsha('0'.repeat(40), 0);
          return 'allowed';
        } catch (err) {
          return (err as Error).message;
        }
      });
      assert.match(String(refusal), /NOPERM/, 'the user may not EVALSHA');
      const replica = quotas(store, fleet('solo', ['solo']));
      const tenant = freshTenant();
      const first = admitted(await replica.acquire(tenant, { requestsPerSecond: 1, burst: 2, maxConcurrent: 5 }));
      assert.equal(first.decidedBy, 'shared');
      assert.deepEqual(first.rate, { limit: 2, remaining: 1, resetMs: 1_000 });
      admitted(await replica.acquire(tenant, { requestsPerSecond: 1, burst: 2, maxConcurrent: 5 }));
      const third = await replica.acquire(tenant, { requestsPerSecond: 1, burst: 2, maxConcurrent: 5 });
      assert.equal(third.decidedBy, 'shared');
      assert.equal(!third.admitted && third.limit, 'rate');
      assert.ok(!third.admitted && third.retryAfterMs > 0 && third.retryAfterMs <= 1_000);
    } finally {
      await store.close();
      await acl.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a check Redis does not answer within checkTimeoutMs takes the degraded path (DEBUG SLEEP)', async () => {
    // The store would wait a whole second for its answer: the quota check must not.
    const slowStore = storeFor({ url: server.url, commandTimeoutMs: 1_000, breakerFailures: 10 });
    await until(() => slowStore.status === 'up', 5_000);
    const replica = quotas(slowStore, fleet('r', ['r', 's']), { checkTimeoutMs: 20 });
    try {
      const sleeping = admin.run('debug', (c) => c.call('DEBUG', 'SLEEP', '0.5'));
      await new Promise((resolve) => setTimeout(resolve, 30));
      const started = performance.now();
      const outcome = await replica.acquire(freshTenant(), { requestsPerSecond: 10, burst: 4 });
      const waited = performance.now() - started;
      assert.equal(outcome.decidedBy, 'degraded');
      assert.ok(waited < 200, `the check waited ${waited.toFixed(0)} ms`);
      assert.deepEqual(admitted(outcome).rate?.limit, 2, 'the burst divided by the two live replicas');
      await sleeping;
    } finally {
      await slowStore.close();
    }
  });
});

describe('TenantQuotas without Redis answering', () => {
  let dead: SharedStore;
  before(async () => {
    const [port] = await freePorts(1);
    dead = storeFor({ url: `redis://127.0.0.1:${port}` });
  });
  after(() => dead.close());

  it('divides every limit by the live replicas last seen, never allowing one replica the full limit', async () => {
    const now = 0;
    const replica = quotas(dead, fleet('r1', ['r1', 'r2', 'r3']), { now: () => now });
    const rate = { requestsPerSecond: 30, burst: 6 };
    const outcomes = [await replica.acquire('rated', rate), await replica.acquire('rated', rate), await replica.acquire('rated', rate)];
    assert.deepEqual(
      outcomes.map((o) => [o.decidedBy, o.admitted]),
      [['degraded', true], ['degraded', true], ['degraded', false]],
      'a burst of 6 over 3 replicas is 2 here',
    );
    const refused = outcomes[2] as Extract<QuotaOutcome, { admitted: false }>;
    assert.equal(refused.limit, 'rate');
    assert.ok(Math.abs(refused.retryAfterMs - 100) < 1e-6, '30 req/s over 3 replicas: one per 100 ms here');
    const concurrency = { maxConcurrent: 6 };
    admitted(await replica.acquire('busy', concurrency));
    const second = admitted(await replica.acquire('busy', concurrency));
    const third = await replica.acquire('busy', concurrency);
    assert.equal(!third.admitted && third.limit, 'concurrency');
    second.release();
    admitted(await replica.acquire('busy', concurrency));
  });

  it('without Redis configured, enforces the full limits on this replica', async () => {
    const now = 0;
    const replica = quotas(undefined, fleet('alone', ['alone', 'b', 'c']), { now: () => now });
    const outcomes = await Promise.all(Array.from({ length: 7 }, () => replica.acquire('t', { requestsPerSecond: 30, burst: 6, maxConcurrent: 10 })));
    assert.deepEqual(
      outcomes.map((o) => o.admitted),
      [true, true, true, true, true, true, false],
    );
    assert.ok(outcomes.every((o) => o.decidedBy === 'local'));
    assert.deepEqual(outcomes[0]?.rate, { limit: 6, remaining: 5, resetMs: 1000 / 30 });
  });
});

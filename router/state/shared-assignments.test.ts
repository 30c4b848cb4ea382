import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { configSchema } from '../config/schema.ts';
import type { SessionLookupResult } from '../metrics/label-values.ts';
import { createRedisClient } from './redis-client.ts';
import { MAX_ENGINE_ID_LENGTH, PREFIX_PLACEMENT_SPACE, SharedAssignments, entryBytes, type AssignmentSettings } from './shared-assignments.ts';
import { SessionNames, legacySessionName } from './session-names.ts';
import { SharedStore } from './shared-store.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { until } from '../../tests/kit/redis/store-fixture.ts';

const names = new SessionNames('a-test-secret-of-at-least-32-characters');
/** The session name the classifier would give `key` (no tenant, model `m`). */
const n = (key: string) => names.name(undefined, 'm', key);

interface Replica {
  readonly sessions: SharedAssignments;
  readonly store: SharedStore;
  readonly commands: string[];
  readonly lookups: SessionLookupResult[];
  clock: number;
}

function replica(url: string, settings: Partial<AssignmentSettings> = {}): Replica {
  const commands: string[] = [];
  const lookups: SessionLookupResult[] = [];
  const store = new SharedStore(
    createRedisClient(configSchema.parse({ redis: { url } }).redis, () => ''),
    { keyPrefix: 'sessions-test:', breaker: { failures: 3, openMs: 1000 }, commandTimeoutMs: 50 },
    { commandDone: (command) => commands.push(command), commandFailed: () => {}, breakerMoved: () => {}, statusChanged: () => {} },
  );
  const r: Replica = {
    store,
    commands,
    lookups,
    clock: 1_000_000,
    sessions: new SharedAssignments(store, { ttlMs: 60_000, localCacheMs: 1_000, localCacheEntries: 1_000, localCacheBytes: 32 * 1024 * 1024, ...settings }, (result) => lookups.push(result), () => r.clock),
  };
  return r;
}

/** Lets the fire-and-forget writes land. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('SharedAssignments against a real redis-server', () => {
  let server: RedisServer;
  let replicas: Replica[] = [];
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server.stop();
  });
  const start = async (count: number, settings: Partial<AssignmentSettings> = {}) => {
    await Promise.all(replicas.map((r) => r.store.close()));
    replicas = Array.from({ length: count }, () => replica(server.url, settings));
    await until(() => replicas.every((r) => r.store.status === 'up'));
    return replicas;
  };

  it('stores the first assignment (first writer wins: the loser adopts it) and never the session key itself', async () => {
    const [a, b] = await start(2);
    assert.equal(await a!.sessions.lookUp(n('conversation-1')), null, 'none stored yet');
    // The first write lands before the second is sent: on two connections, sending order alone
    // does not decide which one Redis sees first.
    const sentBefore = a!.commands.length;
    a!.sessions.assign(n('conversation-1'), undefined, 'e1');
    await until(() => a!.commands.length > sentBefore);
    b!.sessions.assign(n('conversation-1'), undefined, 'e2');
    await until(() => b!.sessions.cached(n('conversation-1')) === 'e1', 5_000, 'the second writer never adopted the stored engine');
    assert.equal(a!.sessions.cached(n('conversation-1')), 'e1');
    const keys = (await a!.store.run('keys', (client) => client.keys('sessions-test:*'))) ?? [];
    assert.equal(keys.length, 1);
    assert.ok(!keys[0]!.includes('conversation'), 'Redis holds a digest, not the key');
  });

  it('counts the sessions it holds per engine, for /debug/endpoints and switchyard status', async () => {
    const [a, b] = await start(2);
    for (const [key, engine] of [['s1', 'e1'], ['s2', 'e1'], ['s3', 'e2']] as const) a!.sessions.assign(n(key), undefined, engine);
    await settle();
    assert.deepEqual(Object.fromEntries(a!.sessions.sessionsByEngine()), { e1: 2, e2: 1 });
    assert.deepEqual(Object.fromEntries(b!.sessions.sessionsByEngine()), {}, 'another replica counts only what it read or made');
    await b!.sessions.lookUp(n('s3'));
    assert.deepEqual(Object.fromEntries(b!.sessions.sessionsByEngine()), { e2: 1 });
  });

  it('records a move by compare-and-set, so a replica moving off an engine someone already moved from follows that move', async () => {
    const [a, b] = await start(2, { localCacheMs: 60_000 });
    const reader = replica(server.url, { localCacheMs: 0 });
    replicas.push(reader);
    await until(() => reader.store.status === 'up');
    const storedIs = async (engine: string) => {
      for (let tries = 0; (await reader.sessions.lookUp(n('conversation-2'))) !== engine; tries++) {
        assert.ok(tries < 100, `never stored ${engine}`);
        await settle();
      }
    };
    a!.sessions.assign(n('conversation-2'), undefined, 'e1');
    await storedIs('e1');
    a!.sessions.assign(n('conversation-2'), 'e1', 'e2');
    await storedIs('e2');
    // B still thinks the session is on e1 and moves it to e3: the compare fails, and B adopts e2.
    b!.sessions.assign(n('conversation-2'), 'e1', 'e3');
    await until(() => b!.sessions.cached(n('conversation-2')) === 'e2');
    await storedIs('e2');
  });

  it("keys its table by the session's name and bounds it in bytes, whatever the keys are", async () => {
    const [a] = await start(1, { localCacheEntries: 100_000, localCacheBytes: 1_048_576 });
    for (let i = 0; i < 10_000; i++) a!.sessions.assign(n(`${String(i).padStart(6, '0')}${'k'.repeat(15_000)}`), undefined, 'engine-1');
    const { entries, bytes } = a!.sessions.localSize;
    assert.ok(bytes <= 1_048_576, `${bytes} estimated bytes`);
    assert.equal(entries, Math.floor(1_048_576 / entryBytes('engine-1')), 'the byte bound, not the entry bound, decided');
    assert.equal(a!.sessions.cached(n(`009999${'k'.repeat(15_000)}`)), 'engine-1', 'the newest are kept');
    assert.equal(a!.sessions.cached(n(`000000${'k'.repeat(15_000)}`)), undefined, 'the oldest went first');
    await settle();
  });

  it('takes an oversized stored value for no answer, and the next claim replaces it without reading it back', async () => {
    const [a] = await start(1, { localCacheMs: 0 });
    const admin = replica(server.url);
    replicas.push(admin);
    await until(() => admin.store.status === 'up');
    a!.sessions.assign(n('conversation-6'), undefined, 'e1');
    await settle();
    const key = `sessions-test:session-v2:${n('conversation-6')}`;
    assert.equal(await admin.store.run('get', (client) => client.get(key)), 'e1');
    await admin.store.run('set', (client) => client.set(key, 'x'.repeat(4 * 1024 * 1024)));
    const failures: string[] = [];
    const watched = new SharedStore(
      createRedisClient(configSchema.parse({ redis: { url: server.url } }).redis, () => ''),
      { keyPrefix: 'sessions-test:', breaker: { failures: 3, openMs: 1000 }, commandTimeoutMs: 50 },
      { commandDone: () => {}, commandFailed: (command, kind) => failures.push(`${command}:${kind}`), breakerMoved: () => {}, statusChanged: () => {} },
    );
    const b = new SharedAssignments(watched, { ttlMs: 60_000, localCacheMs: 0, localCacheEntries: 1_000, localCacheBytes: 1_048_576 }, () => {});
    try {
      await until(() => watched.status === 'up');
      assert.equal(await b.lookUp(n('conversation-6')), undefined, 'no answer: not an engine id');
      assert.deepEqual(failures, ['session_get:invalid_reply']);
      b.assign(n('conversation-6'), undefined, 'e2');
      await settle();
      assert.equal(await b.lookUp(n('conversation-6')), 'e2', 'the claim replaced the oversized value');
      assert.ok(MAX_ENGINE_ID_LENGTH < 4 * 1024 * 1024);
    } finally {
      await watched.close();
    }
  });

  it('slides the TTL at most once per quarter of it, and keeps a copy for localCacheMs', async () => {
    const [a] = await start(1, { ttlMs: 60_000, localCacheMs: 1_000 });
    a!.sessions.assign(n('conversation-3'), undefined, 'e1');
    await settle();
    for (let i = 0; i < 100; i++) {
      a!.clock += 500; // 50 s in all: within a quarter of the TTL for the first 15 s
      if (a!.sessions.cached(n('conversation-3')) === undefined) assert.equal(await a!.sessions.lookUp(n('conversation-3')), 'e1');
    }
    await settle();
    const touches = a!.commands.filter((c) => c === 'session_touch').length;
    const gets = a!.commands.filter((c) => c === 'session_get').length;
    assert.equal(touches, 3, '50 s of traffic with a 60 s TTL: refreshed at 15, 30 and 45 s');
    assert.equal(gets, 50, 'one GET per second of traffic (the local copy lasts 1 s)');
  });

  it('keeps a provisional assignment briefly until a replica reads it, which slides it to the full TTL; prefix placements have their own key space', async () => {
    const [a, b] = await start(2, { ttlMs: 600_000 });
    const redis = new Redis(server.url);
    try {
      const placementsOf = (r: Replica) => new SharedAssignments<string>(r.store, { ttlMs: 600_000, localCacheMs: 1_000, localCacheEntries: 1_000, localCacheBytes: 1_048_576 }, () => {}, () => r.clock, () => {}, PREFIX_PLACEMENT_SPACE);
      const [placeA, placeB] = [placementsOf(a!), placementsOf(b!)];
      placeA.assign('g1', undefined, 'e1', 60_000);
      placeA.assign('g2', undefined, 'e2');
      await settle();
      const ttl = (key: string) => redis.pttl(`sessions-test:${key}`);
      assert.ok((await ttl('prefix-v1:g1')) > 50_000 && (await ttl('prefix-v1:g1')) <= 60_000, 'provisional: a minute');
      assert.ok((await ttl('prefix-v1:g2')) > 590_000, 'not provisional: the full TTL');
      assert.equal(await redis.exists('sessions-test:session-v2:g1'), 0, 'not in the sessions key space');
      assert.equal(await placeB.lookUp('g1'), 'e1');
      await settle();
      assert.ok((await ttl('prefix-v1:g1')) > 590_000, "another replica's read slides it to the full TTL");
      placeA.assign('g3', undefined, 'e3', 60_000);
      await settle();
      a!.clock += 2_000;
      assert.equal(await placeA.lookUp('g3'), 'e3');
      await settle();
      assert.ok((await ttl('prefix-v1:g3')) > 590_000, "so does the writer's own next read");
      assert.ok(a!.commands.includes('prefix_placement_set') && a!.commands.includes('prefix_placement_get'), 'counted under their own command names');
    } finally {
      redis.disconnect();
    }
  });

  it('rolling upgrade: a miss under the new name reads the name an older release stored, once, and stores it under the new name', async () => {
    const [a] = await start(1, { localCacheMs: 0 });
    const legacyKey = `sessions-test:session:${legacySessionName('upgrade-conversation')}`;
    // What a replica of the previous release wrote for this session.
    await a!.store.run('set', (client) => client.set(legacyKey, 'e-old'));
    assert.equal(await a!.sessions.lookUp(n('upgrade-conversation'), 'upgrade-conversation'), 'e-old');
    await settle();
    const stored = await a!.store.run('get', (client) => client.get(`sessions-test:session-v2:${n('upgrade-conversation')}`));
    assert.equal(stored, 'e-old', 'rewritten under the new name');
    const getsBefore = a!.commands.filter((c) => c === 'session_get').length;
    assert.equal(await a!.sessions.lookUp(n('upgrade-conversation'), 'upgrade-conversation'), 'e-old');
    assert.equal(a!.commands.filter((c) => c === 'session_get').length - getsBefore, 1, 'found under the new name: the old one is not read again');
    assert.equal(await a!.store.run('get', (client) => client.get(legacyKey)), 'e-old', 'the old name is left to expire, never written');
    // A session no release stored: two GETs, and it is placed (null).
    assert.equal(await a!.sessions.lookUp(n('brand-new'), 'brand-new'), null);
  });

  it('while Redis is away, a copy the replica holds (however old) is used, and other sessions get undefined at once', async () => {
    const [a] = await start(1, { localCacheMs: 10 });
    a!.sessions.assign(n('conversation-4'), undefined, 'e2');
    await settle();
    await server.kill();
    await until(() => a!.store.status === 'degraded');
    a!.clock += 60_000;
    assert.equal(a!.sessions.cached(n('conversation-4')), undefined, 'the fresh copy expired');
    assert.equal(await a!.sessions.lookUp(n('conversation-4')), 'e2');
    assert.equal(await a!.sessions.lookUp(n('never-seen')), undefined);
    assert.deepEqual(a!.lookups.slice(-2), ['cache', 'unavailable']);
    a!.sessions.assign(n('conversation-5'), undefined, 'e3');
    await server.restart();
    await until(() => a!.store.status === 'up');
    assert.equal(await a!.sessions.lookUp(n('conversation-5')), 'e3', 'restarted empty: a session seen within its TTL keeps its engine');
    await settle();
    const b = replica(server.url, { localCacheMs: 0 });
    replicas.push(b);
    await until(() => b.store.status === 'up');
    assert.equal(await b.sessions.lookUp(n('conversation-5')), 'e3', '... and is stored again for the others');
    assert.equal(await a!.sessions.lookUp(n('conversation-4')), null, 'a copy older than the TTL is not trusted: placed again');
    await Promise.all(replicas.map((r) => r.store.close()));
    replicas = [];
  });
});

/**
 * The Redis ACL that docs/shared-state.md ("Redis ACL") tells operators to
 * set, proven against real redis-server processes: the two `ACL SETUSER`
 * lines are read from the document itself and applied as written (to a
 * standalone server, a Sentinel group's master and replica, and every node of
 * a cluster), routers run with that user (fleet counts, shared sessions, API
 * keys with a quota),
 * and Redis must have refused none of its commands, while the same user is
 * refused everything outside its key prefix.
 *
 * The router is driven end to end rather than module by module, so a command
 * a later change starts sending shows up here as a refusal until the
 * document grants it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startInProcessRouter, type StartedRouter } from '../../tests/kit/harness.ts';
import { startRedisCluster, type RedisCluster } from '../../tests/kit/redis/redis-cluster.ts';
import { startSentinelGroup, type SentinelGroup } from '../../tests/kit/redis/redis-sentinel.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';

const DOC = new URL('../../docs/shared-state.md', import.meta.url);
const USER = 'switchyard';
const PASSWORD = 'acl-test-password';
const PREFIX = 'switchyard:';
const MODEL = 'acl-model';
const API_KEY = 'sk-acl-test';

/** The `ACL SETUSER` lines of the document's "Redis ACL" section: [every server, cluster only]. */
function documentedAcl(): { base: string[]; cluster: string[] } {
  const markdown = readFileSync(DOC, 'utf8');
  const section = markdown.split(/^## Redis ACL$/m)[1]?.split(/^## /m)[0];
  assert.ok(section !== undefined, 'docs/shared-state.md has a "## Redis ACL" section');
  const lines = [...section.matchAll(/^ACL SETUSER .+$/gm)].map((m) => m[0]);
  const [base, cluster] = lines;
  assert.ok(base !== undefined && cluster !== undefined && lines.length === 2, `two ACL SETUSER lines, found ${lines.length}`);
  const words = (line: string) => line.split(/\s+/).slice(2).map((w) => w.replace(/^>PASSWORD$/, `>${PASSWORD}`));
  assert.ok(base.includes(` ~${PREFIX}* `), 'the base line limits keys to the default prefix');
  return { base: words(base), cluster: words(cluster) };
}

/** An administrator's connection (the default user) to one server. */
function admin(port: number): Redis {
  return new Redis({ host: '127.0.0.1', port, lazyConnect: false, maxRetriesPerRequest: 1 });
}

/** Counts of what one server saw: ACL refusals and every key, by the administrator's connection. */
async function inspect(port: number): Promise<{ refusals: string[]; rejectedCalls: string[]; keys: string[]; calls: Map<string, number> }> {
  const redis = admin(port);
  try {
    const log = (await redis.call('ACL', 'LOG')) as unknown[][];
    const refusals = log.map((entry) => {
      const fields = new Map<string, unknown>();
      for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
      return `${String(fields.get('reason'))} ${String(fields.get('object'))} (${String(fields.get('context'))}, ${String(fields.get('username'))})`;
    });
    const stats = await redis.info('commandstats');
    const calls = new Map<string, number>();
    const rejectedCalls: string[] = [];
    for (const [, name, fields] of stats.matchAll(/^cmdstat_([^:]+):(.*)$/gm)) {
      calls.set(name as string, Number(/calls=(\d+)/.exec(fields as string)?.[1] ?? 0));
      const rejected = Number(/rejected_calls=(\d+)/.exec(fields as string)?.[1] ?? 0);
      if (rejected > 0) rejectedCalls.push(`${name}: ${rejected}`);
    }
    const keys = await redis.keys('*');
    return { refusals, rejectedCalls, keys, calls };
  } finally {
    redis.disconnect();
  }
}

interface Topology {
  readonly name: string;
  /** Ports of every server the router may talk to. */
  readonly ports: readonly number[];
  /** The `redis` config block, without credentials. */
  readonly redis: Record<string, unknown>;
  readonly cluster: boolean;
  stop(): Promise<void>;
}

async function standalone(): Promise<Topology> {
  const server: RedisServer = await startRedisServer();
  return { name: 'standalone', ports: [server.port], redis: { url: server.url }, cluster: false, stop: () => server.stop() };
}

async function sentinel(): Promise<Topology> {
  const group: SentinelGroup = await startSentinelGroup();
  return {
    name: 'sentinel',
    // Master and replica: the document sets the user on both (ACLs are not replicated).
    ports: group.servers.map((s) => s.port),
    redis: { mode: 'sentinel', nodes: group.nodes, sentinelMasterName: group.masterName },
    cluster: false,
    stop: () => group.stop(),
  };
}

async function cluster(): Promise<Topology> {
  const c: RedisCluster = await startRedisCluster(3);
  return { name: 'cluster', ports: c.servers.map((s) => s.port), redis: { mode: 'cluster', nodes: c.nodes }, cluster: true, stop: () => c.stop() };
}

for (const start of [standalone, sentinel, cluster]) {
  describe(`the documented Redis ACL (${start.name})`, () => {
    let topology: Topology;
    let dir: string;
    const engines: EngineSimulator[] = [];
    /** Two replicas: `a` routes to both engines, `b` knows only the first, so sessions `a` put on the second move on `b`. */
    const replicas: Replica[] = [];

    before(async () => {
      const acl = documentedAcl();
      topology = await start();
      for (const port of topology.ports) {
        const redis = admin(port);
        try {
          assert.equal(await redis.call('ACL', 'SETUSER', ...acl.base), 'OK');
          if (topology.cluster) assert.equal(await redis.call('ACL', 'SETUSER', ...acl.cluster), 'OK');
        } finally {
          redis.disconnect();
        }
      }
      dir = mkdtempSync(join(tmpdir(), 'switchyard-acl-'));
      writeFileSync(join(dir, 'redis-password'), `${PASSWORD}\n`);
      writeFileSync(
        join(dir, 'api-keys.yaml'),
        // One request a second with room for all of them at once: the rate state then outlives the test's look at Redis.
        ['tenants:', '  acl-tenant: { requestsPerSecond: 1, burst: 100, maxConcurrent: 100 }', 'keys:', `  - key: ${API_KEY}`, '    tenant: acl-tenant', ''].join('\n'),
      );
      for (let i = 0; i < 2; i++) {
        const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 8, ttftMs: 1, itlMs: 1, outputTokens: 2 } });
        await engine.listen();
        engines.push(engine);
      }
      for (const backends of [engines, engines.slice(0, 1)]) replicas.push(await startReplica(topology, dir, backends));
    });

    after(async () => {
      await Promise.all(replicas.map((r) => r.router.close()));
      await Promise.all(engines.map((e) => e.close()));
      await topology?.stop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    it("runs the router's fleet counts, shared sessions and quotas with that user; Redis refuses none of its commands", async () => {
      const [a, b] = replicas as [Replica, Replica];
      // Each replica reading the other's counts proves the user is in and the fleet script runs.
      await waitUntil(topology.ports, async () => (await Promise.all(replicas.map((r) => gauge(r.admin, 'switchyard_fleet_replicas')))).every((n) => n === 2), 'the replicas never saw each other');
      // Ten conversations through a, then again through b, which cannot reach the second engine.
      for (const [round, replica] of [a, b, a].map((r, i) => [i, r] as const)) {
        for (let i = 0; i < 10; i++) {
          const response = await postJson(
            `${replica.base}/v1/chat/completions`,
            { model: MODEL, messages: [{ role: 'user', content: `turn ${round}` }], max_tokens: 2 },
            { authorization: `Bearer ${API_KEY}`, 'x-session-id': `conversation-${i}`, 'x-request-id': `acl-${round}-${i}` },
          );
          assert.equal(response.status, 200, `round ${round}, request ${i}: ${response.body.toString()}`);
        }
      }
      // A few more publish rounds after the traffic, so every path has run at least once more.
      await new Promise((resolve) => setTimeout(resolve, 300));

      const seen = await Promise.all(topology.ports.map(inspect));
      assert.deepEqual(seen.flatMap((s) => s.refusals), [], 'ACL LOG: nothing refused');
      assert.deepEqual(seen.flatMap((s) => s.rejectedCalls), [], 'INFO commandstats: no rejected calls');
      const keys = seen.flatMap((s) => s.keys);
      assert.deepEqual(keys.filter((k) => !k.startsWith(PREFIX)), [], 'every key is under the prefix');
      for (const [what, pattern] of [
        ['fleet', /^switchyard:\{fleet\}:/],
        ['session', /^switchyard:session-v2:/],
        ['quota', /quota/],
      ] as const) {
        assert.ok(keys.some((k) => pattern.test(k)), `a ${what} key was written (keys: ${keys.join(', ')})`);
      }
      const calls = (name: string) => seen.reduce((sum, s) => sum + (s.calls.get(name) ?? 0), 0);
      // Each replica read the other's counts (HGETALL runs only for another live replica).
      const counts = Object.fromEntries(['evalsha', 'eval', 'hgetall', 'get', 'set'].map((name) => [name, calls(name)]));
      assert.ok(counts['evalsha']! + counts['eval']! > 0 && counts['hgetall']! > 0 && counts['get']! > 0 && counts['set']! > 0, `scripts and plain commands ran as that user: ${JSON.stringify(counts)}`);
      const metrics = await Promise.all(replicas.map(async (r) => (await fetch(`${r.admin}/metrics`)).text()));
      for (const text of metrics) assert.doesNotMatch(text, /^switchyard_shared_state_failures_total\{[^}]*kind="server"[^}]*\} [1-9]/m, 'no command answered with an error');
      // b moved the conversations a had put on the engine b cannot reach (the move script ran too).
      assert.match(metrics[1] as string, /^switchyard_session_moves_total\{reason="gone"\} [1-9]/m);
    });

    it('refuses that user any key outside the prefix, scripts that reach for one, and the dangerous commands', async () => {
      const user = new Redis({ host: '127.0.0.1', port: topology.ports[0] as number, username: USER, password: PASSWORD, maxRetriesPerRequest: 1 });
      try {
        // Allowed: a key under the prefix (so the refusals below are about the key or the command, not the login).
        // In a cluster the key must be on this node: a slot redirection is not what is tested here.
        if (!topology.cluster) assert.equal(await user.set(`${PREFIX}probe`, '1', 'PX', 10_000), 'OK');
        // Scripts: Redis 7.0 says "can't access" / "can't run", Valkey 8 "no permissions to access a key" / "to run".
        const refused: [string, () => Promise<unknown>, RegExp][] = [
          ['a key outside the prefix', () => user.set('other:key', '1'), /NOPERM/],
          ['a look-alike prefix', () => user.get('switchyard-other:key'), /NOPERM/],
          ['a script reaching outside the prefix', () => user.eval("return redis.call('GET', 'other:key')", 0), /can't access|no permissions to access a key|NOPERM/i],
          ['a script running a command not granted', () => user.eval("return redis.call('FLUSHALL')", 0), /can't run|no permissions to run|NOPERM/i],
          ['FLUSHALL', () => user.flushall(), /NOPERM/],
          ['KEYS', () => user.keys('*'), /NOPERM/],
          ['CONFIG GET', () => user.config('GET', 'requirepass'), /NOPERM/],
          ['SUBSCRIBE', () => user.call('SUBSCRIBE', 'channel'), /NOPERM/],
        ];
        for (const [what, command, error] of refused) await assert.rejects(command(), error, what);
      } finally {
        user.disconnect();
      }
    });
  });
}

/** A router replica as the tests drive it. */
type Replica = StartedRouter;

/** Starts a router over `backends` with the ACL user, the API keys file and quick fleet publishes. */
function startReplica(topology: Topology, dir: string, backends: readonly EngineSimulator[]): Promise<Replica> {
  const config = {
    backends: backends.map((e) => e.url),
    redis: { ...topology.redis, username: USER, passwordFile: join(dir, 'redis-password'), keyPrefix: PREFIX, publishIntervalMs: 50, replicaTtlMs: 400 },
    // Every session-keyed request asks Redis, none is answered from the replica's cache.
    sessions: { localCacheMs: 0 },
    auth: { apiKeysFile: join(dir, 'api-keys.yaml') },
  };
  const file = join(dir, `router-${backends.length}.json`);
  writeFileSync(file, JSON.stringify(config));
  return startInProcessRouter(['--config', file], backends.length);
}

/** The value of an unlabelled gauge on a replica's /metrics; undefined while it has no series. */
async function gauge(admin: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Polls `condition` until it holds; on timeout the error names what Redis refused meanwhile. */
async function waitUntil(ports: readonly number[], condition: () => Promise<boolean>, message: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      const seen = await Promise.all(ports.map(inspect));
      throw new Error(`${message}; keys: ${seen.flatMap((s) => s.keys).join(', ')}; refused: ${seen.flatMap((s) => s.refusals).join('; ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

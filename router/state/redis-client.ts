/**
 * Builds the one ioredis client of a router process from `redis.*`:
 * standalone, Sentinel or Cluster, with password and TLS. Every option here
 * serves one rule: Redis may make a decision better, never a request slower
 * by more than one short timeout, and never fail it.
 *
 * - No offline queue: while disconnected a command fails at once instead of
 *   waiting for a reconnect.
 * - The store times each command itself (`commandTimeoutMs`, see
 *   shared-store.ts), judging it after the event loop has read what arrived.
 *   The client's own timeout is a backstop at four times that, for the
 *   commands the client sends itself (the ready check after a reconnect, the
 *   Sentinel and Cluster queries): without one, the ready check of a master
 *   that is paused but still accepts connections waits forever, and the
 *   store never reaches the master a failover elected.
 * - No retries per request and no resending after a reconnect: a command
 *   that did not get its answer in time is abandoned (the caller fell back).
 * - Reconnects forever, backing off to 1 s apart, so recovery is automatic.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { parseHostPort, unbracketHost } from '../config/host-port.ts';
import type { Config } from '../config/schema.ts';

/** The client: a single connection (standalone or through Sentinel) or a cluster. */
export type RedisClient = Redis | Cluster;

/** Reads a secret file (one line), as the config module checks every secret file. */
export type SecretReader = (path: string, option: string) => string;

/** Longest pause between reconnect attempts (ms). */
const MAX_RECONNECT_DELAY_MS = 1_000;

/** True when `redis.*` configures a Redis at all. */
export function redisConfigured(settings: Config['redis']): boolean {
  return settings.url !== undefined || settings.nodes.length > 0;
}

/**
 * A client for `settings`, connecting in the background (it does not wait
 * for the connection). Secret files are read here, once, so an unreadable
 * one stops start-up.
 */
export function createRedisClient(settings: Config['redis'], readSecret: SecretReader): RedisClient {
  const password = settings.passwordFile === undefined ? undefined : readSecret(settings.passwordFile, 'redis.passwordFile');
  const tls = tlsOptions(settings);
  const common = {
    ...defined({ username: settings.username, password, tls }),
    connectTimeout: settings.connectTimeoutMs,
    commandTimeout: backstopTimeoutMs(settings.commandTimeoutMs),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 5), MAX_RECONNECT_DELAY_MS),
    // The router names its keys itself (hash tags matter in a cluster); no ioredis-side prefix.
    keyPrefix: '',
    lazyConnect: false,
    // Dropping a connection to a peer that stopped answering must not wait for its FIN (ioredis: 2 s).
    disconnectTimeout: 200,
    // ioredis sends CLIENT SETINFO on connect; Redis 7.2+ and Valkey refuse it to the documented
    // least-privilege ACL user, and every refusal lands in ACL LOG. The library name buys nothing.
    disableClientInfo: true,
  } satisfies RedisOptions;
  if (settings.mode === 'cluster') {
    return new Cluster(settings.nodes.map((node) => parseHostPort(node)), {
      enableOfflineQueue: false,
      // The ready check goes to a random node that may still be connecting; without an offline queue it
      // fails and the client starts over with growing pauses (up to seconds before the first command).
      enableReadyCheck: false,
      clusterRetryStrategy: (attempt) => Math.min(100 * attempt, MAX_RECONNECT_DELAY_MS),
      slotsRefreshTimeout: Math.max(settings.commandTimeoutMs, 1_000),
      redisOptions: withoutRetryStrategy(common),
      // TLS servers announce addresses the certificate may not name; keep the configured name.
      ...(tls === undefined ? {} : { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) }),
    });
  }
  if (settings.mode === 'sentinel') {
    const sentinelPassword = settings.sentinelPasswordFile === undefined ? undefined : readSecret(settings.sentinelPasswordFile, 'redis.sentinelPasswordFile');
    return new Redis({
      ...common,
      ...defined({ sentinelPassword, sentinelTLS: tls }),
      sentinels: settings.nodes.map((node) => parseHostPort(node)),
      name: settings.sentinelMasterName,
      enableTLSForSentinelMode: tls !== undefined,
      // A frozen or cut-off master keeps its TCP connection open; the store reconnects (asking the Sentinels
      // again) each time its breaker opens. ioredis' own failoverDetector is not used: in tests it left one
      // client of two without a connection after a failover, about one time in four.
      sentinelRetryStrategy: (attempt) => Math.min(100 * attempt, MAX_RECONNECT_DELAY_MS),
      // After a failover the old master may answer READONLY: reconnect, Sentinel names the new one.
      reconnectOnError: (err) => err.message.startsWith('READONLY'),
    });
  }
  const url = new URL(settings.url as string);
  return new Redis({ ...common, host: unbracketHost(url.hostname), port: Number(url.port || 6379), db: Number(url.pathname.slice(1) || 0) });
}

/**
 * The client's own command timeout: long enough that the store's judgement
 * (`commandTimeoutMs` plus one event-loop iteration) comes first for its
 * commands, short enough that a command the client sends itself never hangs.
 */
function backstopTimeoutMs(commandTimeoutMs: number): number {
  return Math.max(4 * commandTimeoutMs, 200);
}

/** `options` without its undefined members (the client's option types are exact). */
function defined<T extends object>(options: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** A cluster reconnects each node by its own strategy, not the standalone one. */
function withoutRetryStrategy(options: object): ClusterRedisOptions {
  const { retryStrategy: _retry, enableOfflineQueue: _queue, ...rest } = options as RedisOptions;
  return rest as ClusterRedisOptions;
}

type ClusterRedisOptions = NonNullable<NonNullable<ConstructorParameters<typeof Cluster>[1]>['redisOptions']>;

function tlsOptions(settings: Config['redis']): ConnectionOptions | undefined {
  const { tls } = settings;
  if (!tls.enabled && !(settings.url?.startsWith('rediss:') ?? false)) return undefined;
  return defined({
    ca: tls.caFile === undefined ? undefined : readFileSync(tls.caFile),
    cert: tls.certFile === undefined ? undefined : readFileSync(tls.certFile),
    key: tls.keyFile === undefined ? undefined : readFileSync(tls.keyFile),
    servername: tls.serverName,
  });
}

/**
 * The router setups a prefix-affinity row sends its load to: switchyard with
 * one of its policies (one process, or several behind nginx round-robin as a
 * Kubernetes Service would spread them), the oracle, or a peer router's
 * `cache_aware` policy. A setup that cannot start here comes back as a
 * reason, never an exception, so the row says why instead of ending the run.
 */
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { startNginx } from './baselines/nginx.ts';
import type { PeerRouterName } from './baselines/peer-router.ts';
import type { EngineSimulator } from '../sim/server.ts';
import { FLEET, MODEL } from './prefix-fleet.ts';
import { PrefixOracle } from './prefix-oracle.ts';
import { waitUntilRoutable } from './run-policy.ts';
import { startPeer, startRouterSystem, stopAll, type System } from './systems.ts';

/** Router setups a row can run. */
export const ROUTER_NAMES = ['round-robin', 'least-load', 'least-load-redis', 'prefix-affinity', 'prefix-affinity-redis', 'oracle', 'vllm-router', 'smg'] as const;
/**
 * One of {@link ROUTER_NAMES}: switchyard's policies, the oracle, and the peers' `cache_aware`.
 * A `-redis` name is that policy with its replicas sharing a fresh redis-server (fleet load,
 * and for prefix-affinity its placements); at one replica it is not run.
 */
export type RouterName = (typeof ROUTER_NAMES)[number];

/** Whether `name`'s replicas share a redis-server. */
export function sharesRedis(name: RouterName): boolean {
  return name.endsWith('-redis');
}

/** Whether `name` is a peer's router. */
export function isPeer(name: RouterName): name is PeerRouterName {
  return name === 'vllm-router' || name === 'smg';
}

/** Something load is sent to: a router setup over the fleet. */
export interface Target {
  readonly url: string;
  readonly description: string;
  /** Router processes to charge CPU to (not nginx, not this process). */
  pids(): number[];
  stop(): Promise<void>;
}

/** Queue length at which switchyard sheds by default (admission.maxWaiting); the oracle sheds at the same when shedding is on. */
const SHED_AT_WAITING = 5;

/** What a setup needs to know about its row. */
export interface TargetSpec {
  readonly router: RouterName;
  /** Router processes behind nginx round-robin (1: the router directly; the oracle is always one). */
  readonly replicas: number;
  /** False: the router never sheds (switchyard's saturation thresholds out of reach, the oracle's queue bound off). */
  readonly shedding: boolean;
  /** Extra switchyard flags, after the row's own (so they win). */
  readonly routerArgs?: readonly string[];
}

/** Starts `spec.router` over `engines` (the caller owns them; `stop()` stops only the routers), or says why it cannot run. */
export async function startTarget(spec: TargetSpec, engines: EngineSimulator[]): Promise<Target | { unavailable: string }> {
  const urls = engines.map((engine) => engine.url);
  if (spec.router === 'oracle') {
    const oracle = new PrefixOracle({ engines, maxWaiting: spec.shedding ? SHED_AT_WAITING : Number.MAX_SAFE_INTEGER });
    await oracle.listen();
    return { url: oracle.url, description: `PrefixOracle (loadtest/scenarios/prefix-oracle.ts, in-process) over the simulators' true cache contents, maxWaiting ${spec.shedding ? SHED_AT_WAITING : 'unbounded'}`, pids: () => [], stop: () => oracle.close() };
  }
  const routers: System[] = [];
  let redis: RedisServer | undefined;
  const stopRedis = async () => {
    await redis?.stop();
  };
  try {
    if (sharesRedis(spec.router)) redis = await startRedisServer();
    for (let i = 0; i < spec.replicas; i++) {
      if (isPeer(spec.router)) {
        const peer = await startPeer(urls, MODEL, undefined, { peer: spec.router, policy: 'cache_aware' });
        if ('unavailable' in peer) {
          await stopAll(routers);
          return { unavailable: peer.unavailable };
        }
        routers.push(peer);
      } else {
        const router = await startRouterSystem(urls, { name: `switchyard-${i + 1}`, args: [...switchyardArgs(spec), ...(redis === undefined ? [] : ['--redis-url', redis.url])] });
        routers.push(router);
        if (router.adminUrl !== undefined) await waitUntilRoutable(router.adminUrl, urls);
      }
    }
  } catch (err) {
    await stopAll(routers);
    await stopRedis();
    return { unavailable: firstLine(err) };
  }
  const description = `${routers[0]?.description ?? ''}${spec.replicas > 1 ? `; ${spec.replicas} processes behind nginx round-robin` : ''}${redis === undefined ? '' : ', sharing one redis-server'}`;
  if (spec.replicas === 1) {
    const router = routers[0] as System;
    return {
      url: router.url,
      description,
      pids: () => router.pids(),
      stop: async () => {
        await router.stop();
        await stopRedis();
      },
    };
  }
  let nginx: Awaited<ReturnType<typeof startNginx>>;
  try {
    nginx = await startNginx({ upstreams: routers.map((r) => r.url) });
  } catch (err) {
    await stopAll(routers);
    await stopRedis();
    return { unavailable: `nginx in front of ${spec.replicas} routers: ${firstLine(err)}` };
  }
  return {
    url: nginx.url,
    description,
    pids: () => routers.flatMap((r) => r.pids()),
    stop: async () => {
      await nginx.stop();
      await stopAll(routers);
      await stopRedis();
    },
  };
}

/**
 * switchyard's flags for a row: its policy, scrapes four times a second, the
 * engines' true capacity (so the safe start for unknown engines is not part
 * of the comparison), shedding at 5 waiting with no router queue (what the
 * oracle models), or with shedding off saturation thresholds no engine
 * reaches (peers have no admission to match).
 */
function switchyardArgs(spec: TargetSpec): string[] {
  return [
    '--routing-policy', spec.router.replace(/-redis$/, ''),
    '--scrape-interval-ms', '250',
    '--load-default-capacity', String(FLEET.slots),
    '--load-safe-start-enabled', 'false',
    // Shedding: at 5 waiting and at once, as the oracle models it (the router's default queues instead).
    ...(spec.shedding ? ['--admission-max-waiting', '5', '--admission-queue-length', '0'] : ['--admission-max-waiting', '1000000', '--admission-kv-cache-threshold', '1', '--admission-queue-length', '0']),
    ...(spec.routerArgs ?? []),
  ];
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}


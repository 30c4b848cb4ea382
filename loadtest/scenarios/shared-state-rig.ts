/**
 * One router fleet for one run: N replicas over the same engines, behind
 * nginx round-robin (standing in for a Kubernetes Service) when there are
 * several, alone when there is one. With Redis configured, the rig waits
 * for the replicas to report the shared state up and the fleet formed
 * before load starts, and says plainly when they never do, or when they
 * export no shared-state gauge at all: a run on routers that ignore Redis
 * must not be reported as a run with Redis.
 */
import { startNginx } from './baselines/nginx.ts';
import { ROUTER_ARGS } from './shared-state-plan.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fleetAgrees, replicaView, scrapeMetrics, type ReplicaView } from './shared-state-prom.ts';
import { waitUntilRoutable } from './run-policy.ts';
import { spawnSwitchyard } from '../../tests/kit/router-process.ts';
import { stopAll, type System } from './systems.ts';

/**
 * What the replicas said about Redis before load started: `off` (not
 * configured), `absent` (configured, but no `switchyard_shared_state_up`
 * series: the routers do not use it), `formed` (every replica up and seeing
 * the whole fleet), `unformed` (the gauge is there, the fleet never formed).
 */
export type SharedStateWiring = 'off' | 'absent' | 'formed' | 'unformed';

/** How to start the rig. */
export interface RigOptions {
  readonly replicas: number;
  /** Every backend URL the routers list (`--backend`), including engines not listening yet. */
  readonly backends: readonly string[];
  /** The backends that must be routable before load starts. */
  readonly ready: readonly string[];
  /** Redis to share state through; none: every replica decides alone. */
  readonly redisUrl?: string;
  /** More router flags (e.g. the API keys file). */
  readonly args?: readonly string[];
  /** Each backend's capacity (max concurrent sequences), as an operator configures it (`load.capacity`). */
  readonly capacities?: ReadonlyMap<string, number>;
}

/** A started fleet of replicas. */
export interface Rig {
  /** Where load goes: nginx over the replicas, or the one replica. */
  readonly front: System;
  readonly routers: readonly System[];
  readonly wiring: SharedStateWiring;
  /** How long after the last replica was ready the fleet formed (ms); undefined unless `formed`. */
  readonly formedInMs: number | undefined;
  /** Each replica's shared-state gauges now (a replica that does not answer reads as all absent). */
  views(): Promise<ReplicaView[]>;
  stop(): Promise<void>;
}

/** The series appears at start-up when Redis is configured; give a slow first scrape this long. */
const GAUGE_APPEARS_MS = 1000;
/** Connect, first publish, first fleet read: well under this on loopback. */
const FLEET_FORMS_MS = 5000;

/**
 * Starts one replica over `backends` and waits until it routes to every URL
 * of `ready`, asking its admin port (the traffic port may require an API
 * key). A replica that never gets there is stopped before the error goes up.
 */
async function startReplica(name: string, backends: readonly string[], ready: readonly string[], args: readonly string[]): Promise<System> {
  const argv = ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--log-level', 'info', '--lifecycle-pre-stop-delay-ms', '0', ...backends.flatMap((url) => ['--backend', url]), ...ROUTER_ARGS, ...args];
  const child = await spawnSwitchyard(argv);
  const router: System = {
    name,
    url: `http://127.0.0.1:${child.ports['traffic'] as number}`,
    adminUrl: `http://127.0.0.1:${child.ports['admin'] as number}`,
    description: `switchyard serve over ${backends.length} backends with ${[...ROUTER_ARGS, ...args].join(' ')}`,
    pids: () => (child.child.pid === undefined ? [] : [child.child.pid]),
    stop: async () => void (await child.stop()),
  };
  try {
    await waitUntilRoutable(router.adminUrl as string, ready);
    return router;
  } catch (err) {
    await router.stop();
    throw err;
  }
}

/** Each replica's shared-state gauges; a replica that does not answer reads as all absent. */
export function readViews(routers: readonly System[]): Promise<ReplicaView[]> {
  return Promise.all(
    routers.map((router) =>
      scrapeMetrics(router.adminUrl as string, 1000).then(replicaView, () => ({ up: undefined, fleetReplicas: undefined, fleetLoadAgeS: undefined })),
    ),
  );
}

async function waitForFleet(routers: readonly System[]): Promise<{ wiring: SharedStateWiring; formedInMs: number | undefined }> {
  const started = performance.now();
  for (;;) {
    const views = await readViews(routers);
    const elapsed = performance.now() - started;
    if (fleetAgrees(views, routers.length)) return { wiring: 'formed', formedInMs: elapsed };
    const gauge = views.some((v) => v.up !== undefined);
    if (!gauge && elapsed > GAUGE_APPEARS_MS) return { wiring: 'absent', formedInMs: undefined };
    if (elapsed > FLEET_FORMS_MS) return { wiring: 'unformed', formedInMs: undefined };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts the replicas (in parallel), nginx over them when there are several, and waits until they can take load. */
export async function startRig(options: RigOptions): Promise<Rig> {
  const args = [...(options.redisUrl === undefined ? [] : ['--redis-url', options.redisUrl]), ...capacityConfig(options.capacities), ...(options.args ?? [])];
  const started = await Promise.allSettled(Array.from({ length: options.replicas }, (_, i) => startReplica(`switchyard-${i + 1}`, options.backends, options.ready, args)));
  const routers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = started.find((s) => s.status === 'rejected');
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  try {
    if (failure !== undefined) throw failure.reason;
    const fleet = options.redisUrl === undefined ? { wiring: 'off' as const, formedInMs: undefined } : await waitForFleet(routers);
    if (routers.length > 1) nginx = await startNginx({ upstreams: routers.map((r) => r.url) });
    const front: System =
      nginx === undefined
        ? (routers[0] as System)
        : { name: `${routers.length} × switchyard`, url: nginx.url, description: `nginx round-robin over ${routers.length} router processes`, pids: () => routers.flatMap((r) => r.pids()), stop: async () => {} };
    const spreader = nginx;
    return {
      front,
      routers,
      ...fleet,
      views: () => readViews(routers),
      stop: async () => {
        await spreader?.stop();
        await stopAll(routers);
      },
    };
  } catch (err) {
    await nginx?.stop();
    await stopAll(routers);
    throw err;
  }
}

/** `--config FILE` with the backends' capacities (a config-file-only setting), or nothing. */
function capacityConfig(capacities: ReadonlyMap<string, number> | undefined): string[] {
  if (capacities === undefined || capacities.size === 0) return [];
  const file = join(mkdtempSync(join(tmpdir(), 'switchyard-capacity-')), 'config.json');
  writeFileSync(file, JSON.stringify({ load: { capacity: Object.fromEntries(capacities) } }));
  return ['--config', file];
}

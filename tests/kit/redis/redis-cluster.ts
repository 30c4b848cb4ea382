/**
 * A real Redis Cluster on 127.0.0.1 for tests: three valkey-server masters
 * with `cluster-enabled yes` and no replicas, joined by `valkey-cli
 * --cluster create` (the pinned wheel's, ../servers.ts), which spreads the
 * 16384 slots over them. Enough to prove the client follows slots and
 * redirections and that keys sharing a `{hash tag}` can go in one script.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startRedisServer, type RedisServer } from './redis-server.ts';
import { redisCliBinary } from '../servers.ts';

const run = promisify(execFile);

/** A running cluster. */
export interface RedisCluster {
  /** `127.0.0.1:PORT` of every node: the `redis.nodes` of cluster mode. */
  readonly nodes: readonly string[];
  readonly servers: readonly RedisServer[];
  /** Stops every node and removes their directories. */
  stop(): Promise<void>;
}

/** Starts `size` (≥ 3) nodes, creates the cluster and waits until every node reports `cluster_state:ok`. */
export async function startRedisCluster(size = 3): Promise<RedisCluster> {
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };
  try {
    for (let i = 0; i < size; i++) {
      servers.push(await startRedisServer({ config: ['cluster-enabled yes', 'cluster-config-file nodes.conf', 'cluster-node-timeout 2000'] }));
    }
    const nodes = servers.map((server) => `127.0.0.1:${server.port}`);
    await run(await redisCliBinary(), ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { timeout: 30_000 });
    const deadline = Date.now() + 15_000;
    for (const server of servers) {
      // Slots are assigned at once; the nodes agree on the whole map a gossip round later.
      while (!(await clusterInfo(server.port)).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error(`node ${server.port} never reported cluster_state:ok`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return { nodes, servers, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function clusterInfo(port: number): Promise<string> {
  const { stdout } = await run(await redisCliBinary(), ['-h', '127.0.0.1', '-p', String(port), 'CLUSTER', 'INFO'], { timeout: 5_000 });
  return stdout;
}

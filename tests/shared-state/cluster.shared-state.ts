/**
 * The store against a real three-node Redis Cluster (cluster-enabled
 * redis-server processes on loopback): it comes up from the seed nodes, a
 * script over several keys works when they share a `{hash tag}` (one slot)
 * and is refused, without throwing, when they do not, and plain keys land
 * on whichever node owns their slot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LuaScript, type SharedStore } from '../../router/state/shared-store.ts';
import { startRedisCluster, type RedisCluster } from '../kit/redis/redis-cluster.ts';
import { recorder, storeFor, until } from '../kit/redis/store-fixture.ts';

/** Adds ARGV[1] to both keys and returns their values: a stand-in for the router's multi-key scripts (quotas). */
const COMMAND_TIMEOUT_MS = 200;

const addToBoth = new LuaScript('add_to_both', "return { redis.call('INCRBY', KEYS[1], ARGV[1]), redis.call('INCRBY', KEYS[2], ARGV[1]) }");

describe('shared store against a real Redis Cluster (three masters on loopback)', () => {
  let cluster: RedisCluster;
  let store: SharedStore;
  const observer = recorder();
  const clusterStore = (observe = recorder()) => storeFor({ mode: 'cluster', nodes: [cluster.nodes[0]], commandTimeoutMs: COMMAND_TIMEOUT_MS }, observe);
  before(async () => {
    cluster = await startRedisCluster();
    // One seed node is enough: the client learns the others from CLUSTER SLOTS.
    store = clusterStore(observer);
    // Generous: today the client may take several seconds to come up (see the promptness test below).
    await until(() => store.status === 'up', 60_000);
  });
  after(async () => {
    await store.close();
    await cluster.stop();
  });

  it(
    'comes up promptly from a seed node, every time',
    async () => {
      for (let i = 0; i < 5; i++) {
        const fresh = clusterStore();
        try {
          const started = Date.now();
          await until(() => fresh.status === 'up', 1_000, `client ${i + 1} of 5 not up`);
          assert.equal(await fresh.run('set', (c) => c.set(fresh.key('{p}'), String(Date.now() - started))), 'OK');
        } finally {
          await fresh.close();
        }
      }
    },
  );

  it('runs a script on two keys with the same {hash tag}, loading it on the node that owns the slot', async () => {
    const keys = [store.key('{tenant-a}:rate'), store.key('{tenant-a}:concurrent')];
    assert.deepEqual(await store.script(addToBoth, keys, [3]), [3, 3]);
    assert.deepEqual(await store.script(addToBoth, keys, [4]), [7, 7], 'second run by its SHA');
    assert.deepEqual(observer.failures, []);
  });

  it('stores plain keys (no tag) across the nodes, each on the node that owns its slot', async () => {
    const names = Array.from({ length: 30 }, (_, i) => store.key(`plain-${i}`));
    for (const name of names) assert.equal(await store.run('set', (c) => c.set(name, name)), 'OK');
    for (const name of names) assert.equal(await store.run('get', (c) => c.get(name)), name);
    // 30 keys over three nodes that split the slots evenly: every node holds some (chance of missing one: 3 × (2/3)^30 ≈ 1e-5).
    const perNode = await Promise.all(
      cluster.servers.map((server) =>
        store.run('dbsize', async (c) => {
          const node = 'nodes' in c ? c.nodes('master').find((n) => n.options.port === server.port) : undefined;
          return node === undefined ? -1 : node.dbsize();
        }),
      ),
    );
    assert.ok(perNode.every((count) => typeof count === 'number' && count > 0), `keys per node: ${perNode.join(', ')}`);
    assert.deepEqual(observer.failures, []);
  });

  it('a script on keys in different slots is refused by the server (CROSSSLOT): undefined, nothing thrown, still up', async () => {
    // switchyard:{a}:x and switchyard:{b}:x are in slots 15495 and 3300.
    assert.equal(await store.script(addToBoth, [store.key('{a}:x'), store.key('{b}:x')], [1]), undefined);
    assert.deepEqual(observer.failures, ['server']);
    assert.equal(store.status, 'up');
  });
});

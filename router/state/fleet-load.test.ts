import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { LoadView } from '../load/load-view.ts';
import { ReplicaCount } from '../load/replica-count.ts';
import { FleetLoad } from './fleet-load.ts';
import { createRedisClient } from './redis-client.ts';
import { SharedStore } from './shared-store.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { until } from '../../tests/kit/redis/store-fixture.ts';

const QUIET = { commandDone: () => {}, commandFailed: () => {}, breakerMoved: () => {}, statusChanged: () => {} };

function viewOver(ids: readonly string[]): LoadView {
  const view = new LoadView({ maxScrapeAgeMs: 3_000, defaultCapacity: 16, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 1 } });
  view.update({ version: 1, endpoints: ids.map((id, i) => ({ id, url: `http://10.0.0.${i + 1}:8000`, models: ['m'], labels: {}, ready: true, draining: false })) });
  return view;
}

function replica(url: string, id: string, view: LoadView, keyPrefix: string, replicaTtlMs = 400, replicas?: ReplicaCount): { fleet: FleetLoad; store: SharedStore } {
  const settings = configSchema.parse({ redis: { url } }).redis;
  const store = new SharedStore(createRedisClient(settings, () => ''), { keyPrefix, breaker: { failures: 3, openMs: 1000 }, commandTimeoutMs: settings.commandTimeoutMs }, QUIET);
  return { fleet: new FleetLoad(store, view, { replicaId: id, publishIntervalMs: 50, replicaTtlMs, replicas }), store };
}

describe('FleetLoad against a real redis-server', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server.stop();
  });

  it("sums the other replicas' open requests per engine, and forgets a replica that stops publishing", async () => {
    const views = [viewOver(['e1', 'e2']), viewOver(['e1', 'e2']), viewOver(['e1', 'e2'])];
    const [a, b, c] = views.map((view, i) => replica(server.url, `r${i}`, view, 'test:'));
    try {
      await until(() => [a, b, c].every((r) => r!.store.status === 'up'));
      const [e1a] = [...views[0]!.all()];
      const [e1b, e2b] = [...views[1]!.all()];
      views[0]!.begin(e1a!);
      views[0]!.begin(e1a!);
      views[1]!.begin(e1b!);
      views[1]!.begin(e2b!);
      for (const r of [a, b, c]) await r!.fleet.publishAndRead();
      for (const r of [a, b, c]) await r!.fleet.publishAndRead();
      const [e1c, e2c] = [...views[2]!.all()];
      assert.deepEqual([e1c!.othersInFlight, e2c!.othersInFlight], [3, 1], 'C sees A and B');
      assert.deepEqual([e1a!.othersInFlight, [...views[0]!.all()][1]!.othersInFlight], [1, 1], "A sees only B's");
      assert.equal(c!.fleet.liveReplicaCount(), 3);
      assert.deepEqual([...c!.fleet.liveReplicaIds()].sort(), ['r0', 'r1', 'r2']);
      // A dies without a word: after its TTL its counts are gone from everyone's view.
      await new Promise((resolve) => setTimeout(resolve, 450));
      await b!.fleet.publishAndRead();
      await c!.fleet.publishAndRead();
      assert.deepEqual([e1c!.othersInFlight, e2c!.othersInFlight], [1, 1]);
      assert.equal(c!.fleet.liveReplicaCount(), 2);
      assert.deepEqual(await c!.store.run('keys', (client) => client.keys('test:{fleet}:inflight:r0')), [], "A's key expired");
    } finally {
      await Promise.all([a, b, c].map((r) => r!.store.close()));
    }
  });

  it('shares the models each replica has queued: engines serving one are shared evenly until its queue empties', async () => {
    const serving = (models: string[]) => {
      const view = new LoadView({ maxScrapeAgeMs: 3_000, defaultCapacity: 16, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 1 } });
      view.update({ version: 1, endpoints: models.map((model, i) => ({ id: `e${i}`, url: `http://10.0.0.${i + 1}:8000`, models: [model], labels: {}, ready: true, draining: false })) });
      return view;
    };
    // A third live replica, C, neither queues nor holds requests at the engines: it gets no seat.
    const views = [serving(['m', 'n']), serving(['m', 'n']), serving(['m', 'n'])];
    const [a, b, c] = views.map((view, i) => replica(server.url, `q${i}`, view, 'queued:'));
    try {
      await until(() => [a, b, c].every((r) => r!.store.status === 'up'));
      await c!.fleet.publishAndRead();
      views[0]!.queueEntered('m');
      views[0]!.queueEntered('m');
      views[0]!.queueLeft('m');
      // A model name longer than any reader accepts is left out, not a reason to refuse A's whole publish.
      views[0]!.queueEntered('x'.repeat(600));
      for (const r of [a, b, a, b]) await r!.fleet.publishAndRead();
      const [m, n] = [...views[1]!.all()];
      assert.deepEqual([m!.fleetShare, n!.fleetShare], [{ replicas: 2, seat: (1 + m!.idHash) % 2 }, undefined], "B (ranked second of A and B by id) leaves A its share of m's engine, not of n's; the idle C has no seat");
      views[2]!.begin([...views[2]!.all()][0]!);
      for (const r of [c, b]) await r!.fleet.publishAndRead();
      assert.deepEqual(m!.fleetShare, { replicas: 3, seat: (1 + m!.idHash) % 3 }, 'C holds a request there: three seats');
      assert.deepEqual([...views[0]!.all()].map((e) => e.fleetShare), [undefined, undefined], 'B queues nothing: A keeps what it frees');
      views[0]!.queueLeft('m');
      for (const r of [a, b]) await r!.fleet.publishAndRead();
      assert.equal(m!.fleetShare, undefined, "A's queue emptied");
    } finally {
      await Promise.all([a, b, c].map((r) => r!.store.close()));
    }
  });

  it('goes back to local counts when Redis goes away, and keeps the last replica count for degraded limits', async () => {
    const views = [viewOver(['e1']), viewOver(['e1'])];
    const [a, b] = views.map((view, i) => replica(server.url, `d${i}`, view, 'degraded:'));
    try {
      await until(() => a!.store.status === 'up' && b!.store.status === 'up');
      const [e1a] = [...views[0]!.all()];
      views[0]!.begin(e1a!);
      await a!.fleet.publishAndRead();
      await b!.fleet.publishAndRead();
      const [e1b] = [...views[1]!.all()];
      assert.equal(e1b!.othersInFlight, 1);
      assert.equal(b!.fleet.replicasSeen, 2);
      await server.kill();
      await until(() => b!.store.status === 'degraded');
      assert.equal(e1b!.othersInFlight, 0, 'degraded: only its own counts');
      assert.equal(b!.fleet.replicasSeen, 1, 'degraded: it knows only itself');
      assert.equal(b!.fleet.liveReplicaCount(), 2, 'the last count seen before Redis went away');
      await server.restart();
      await until(() => b!.store.status === 'up' && a!.store.status === 'up');
      await a!.fleet.publishAndRead();
      await b!.fleet.publishAndRead();
      assert.equal(e1b!.othersInFlight, 1, 'converged again on an empty Redis');
    } finally {
      await Promise.all([a, b].map((r) => r!.store.close()));
    }
  });

  it('divides degraded quotas by the counted replicas before the first read, and after an outage when they are more than the last read saw', async () => {
    const count = new ReplicaCount(10);
    const lone = replica(server.url, 'c0', viewOver(['e1']), 'counted:', 400, count);
    try {
      assert.equal(lone.fleet.liveReplicaCount(), 10, 'configured, before anything is read');
      count.counted(3);
      assert.equal(lone.fleet.liveReplicaCount(), 3, 'counted from the Service: it follows the count');
      await until(() => lone.store.status === 'up');
      await lone.fleet.publishAndRead();
      assert.equal(lone.fleet.liveReplicaCount(), 1, 'Redis says it is alone');
      await server.kill();
      await until(() => lone.store.status === 'degraded');
      count.counted(4);
      assert.equal(lone.fleet.liveReplicaCount(), 4, 'degraded: the Service counts more than the last read');
      await server.restart();
    } finally {
      await lone.store.close();
    }
  });
});

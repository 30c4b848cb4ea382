import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { LoadView } from '../load/load-view.ts';
import type { SafeStartSettings } from '../load/safe-start.ts';
import { FleetLoad } from './fleet-load.ts';
import { FleetSafeStart, parseReply } from './fleet-safe-start.ts';
import { createRedisClient } from './redis-client.ts';
import { SharedStore } from './shared-store.ts';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { until } from '../../tests/kit/redis/store-fixture.ts';

const QUIET = { commandDone: () => {}, commandFailed: () => {}, breakerMoved: () => {}, statusChanged: () => {} };
const SAFE_START: SafeStartSettings = { enabled: true, initialLimit: 4, queueBudget: 1, ttfbTolerance: 2 };

/** A view whose clock moves only when a test says (`clock.now`). */
function viewOver(ids: readonly string[], clock = { now: 1_000_000 }): LoadView {
  const view = new LoadView({ maxScrapeAgeMs: 3_000, defaultCapacity: 16, safeStart: SAFE_START, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 1 } }, () => clock.now);
  view.update({ version: 1, endpoints: ids.map((id, i) => ({ id, url: `http://10.0.0.${i + 1}:8000`, models: ['m'], labels: {}, ready: true, draining: false })) });
  return view;
}

/** A replica's fleet load and safe-start sharing over one store; started, so the replica set names it. */
function replica(url: string, id: string, view: LoadView) {
  const settings = configSchema.parse({ redis: { url } }).redis;
  const store = new SharedStore(createRedisClient(settings, () => ''), { keyPrefix: 'safe:', breaker: { failures: 3, openMs: 1000 }, commandTimeoutMs: settings.commandTimeoutMs }, QUIET);
  const fleet = new FleetLoad(store, view, { replicaId: id, publishIntervalMs: 50, replicaTtlMs: 400 });
  const safeStart = new FleetSafeStart(store, view, { replicaId: id, intervalMs: 50, replicaTtlMs: 400 });
  fleet.start();
  safeStart.start();
  return {
    view,
    async close() {
      safeStart.stop();
      fleet.stop();
      await store.close();
    },
  };
}

/**
 * Raises the first endpoint's safe-start limit the way scrapes do: quiet
 * scrapes, a second apart, after intervals that used the whole limit.
 */
function warm(view: LoadView, clock: { now: number }, scrapes: number): number {
  const [state] = [...view.all()];
  for (let s = 0; s < scrapes; s++) {
    const tokens: number[] = [];
    while (state!.inFlight < (state!.concurrencyLimit ?? 0)) tokens.push(state!.begin());
    clock.now += 1_000;
    view.markScrapeStart(state!);
    view.recordScrape(state!, new Map([['m', { waiting: 0, running: state!.inFlight, kvCacheUsage: 0.01 }]]));
    for (const token of tokens) view.settle(state!, token);
  }
  return state!.concurrencyLimit ?? 0;
}

const limitOf = (view: LoadView) => [...view.all()][0]!.safeStart!.exact;

describe('the safe start shared by the fleet, against a real redis-server', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server.stop();
  });

  it('starts a replica that joins from the fleet record, leaves the warm replicas as they were, and hands a learned capacity to every replica', async () => {
    const clocks = [{ now: 1_000_000 }, { now: 1_000_000 }];
    const warmViews = clocks.map((clock) => viewOver(['e1'], clock));
    const warmLimits = warmViews.map((view, i) => warm(view, clocks[i]!, 8));
    assert.ok(warmLimits.every((limit) => limit > 4 * 4), `the warm replicas grew: ${warmLimits.join(', ')}`);
    const replicas = warmViews.map((view, i) => replica(server.url, `warm-${i}`, view));
    try {
      const fleetSum = warmViews.reduce((sum, view) => sum + limitOf(view), 0);
      const joiner = replica(server.url, 'joiner', viewOver(['e1']));
      replicas.push(joiner);
      // The joiner takes a third of the two warm replicas' limits; theirs stay as they were.
      await until(() => Math.abs(limitOf(joiner.view) - fleetSum / 3) < 0.01);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(warmViews.map((view) => limitOf(view)), warmLimits);
      assert.ok(Math.abs(limitOf(joiner.view) - fleetSum / 3) < 0.01, 'the joiner stays at its share: sharing does not ratchet');

      // One replica sees a queue: the capacity it learned is every replica's.
      const [state] = [...warmViews[0]!.all()];
      warmViews[0]!.recordScrape(state!, new Map([['m', { waiting: 3, running: 12, kvCacheUsage: 0.5 }]]));
      await until(() => replicas.every((r) => [...r.view.all()][0]!.learnedCapacity === 12));
      assert.ok(replicas.every((r) => [...r.view.all()][0]!.safeStart!.phase === 'learned'));
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });
});

describe('parseReply (a reply of any other shape or size is no answer)', () => {
  it('sums the other replicas per engine and keeps the largest learned capacity', () => {
    const records = parseReply([['e1', '10.500 ', 'e2', '3.000 8'], ['e1', '4.000 12']]);
    assert.deepEqual(records?.get('e1'), { limits: 14.5, replicas: 2, learnedCapacity: 12 });
    assert.deepEqual(records?.get('e2'), { limits: 3, replicas: 1, learnedCapacity: 8 });
    assert.equal(parseReply([])?.size, 0);
  });

  it('refuses nil, wrong types, odd lists, out-of-range numbers and oversized fields', () => {
    for (const reply of [null, 'OK', 7, [null], [['e1']], [['e1', 5]], [['e1', 'NaN ']], [['e1', '0.5 ']], [['e1', '2 1.5']], [['e1', '2e9 ']], [['x'.repeat(600), '2 ']], [['e1', '-3 ']]]) {
      assert.equal(parseReply(reply), undefined, JSON.stringify(reply).slice(0, 60));
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { postJson, startFleet, waitForSharedStateUp, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-cold';
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
/** Small engines (2 slots, ~150 ms per request) whose capacity the router is not told. */
const SMALL = { model: MODEL, knobs: { maxSeqs: 2, ttftMs: 100, itlMs: 10, outputTokens: 4 } };
const MAX_WAITING = 5;

/** Samples every engine's waiting queue every 5 ms until stopped; returns the largest seen per engine. */
function watchQueues(engines: readonly EngineSimulator[]): () => number[] {
  const peaks = engines.map(() => 0);
  const timer = setInterval(() => engines.forEach((engine, i) => (peaks[i] = Math.max(peaks[i] as number, engine.scheduler.waiting))), 5);
  return () => {
    clearInterval(timer);
    return peaks;
  };
}

/** `count` requests at once; with `sessions`, each carries its own `x-session-id`. */
async function burst(fleet: Fleet, count: number, sessions = false): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => postJson(`${fleet.base}/v1/chat/completions`, chat, sessions ? { 'x-session-id': `client-${i}` } : {})));
  for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  return statuses;
}

describe('cold start: engines of unknown capacity', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([SMALL, SMALL], ['--scrape-interval-ms', '100', '--admission-max-waiting', String(MAX_WAITING), '--admission-queue-length', '0']);
  });
  after(() => fleet.close());

  it('regression: a cold router pushed a whole burst into small engines before shedding began', async () => {
    const stop = watchQueues(fleet.engines);
    const statuses = await burst(fleet, 60);
    const peaks = stop();
    assert.ok(
      peaks.every((peak) => peak <= MAX_WAITING),
      `engine queues peaked at ${peaks.join('/')} (before the safe start: ~28 each, the whole burst); statuses ${JSON.stringify([...statuses])}`,
    );
    assert.deepEqual([...statuses.keys()].sort(), [200, 429], 'the rest is shed with 429, nothing fails');
    const metrics = await (await fetch(`${fleet.admin}/metrics`)).text();
    assert.match(metrics, /^switchyard_backend_concurrency_limit\{backend="[^"]+"\} \d+$/m);
    // Phase 2 (learned) on every engine, and the debug view says why: the queue the burst caused.
    assert.equal(metrics.match(/^switchyard_backend_safe_start_phase\{backend="[^"]+"\} 2$/gm)?.length, 2);
    const debug = (await (await fetch(`${fleet.admin}/debug/endpoints`)).json()) as { endpoints: { load: { safeStart: { limit: number; phase: string; reason: string } | null } }[] };
    for (const endpoint of debug.endpoints) {
      assert.equal(endpoint.load.safeStart?.phase, 'learned', 'the queue the burst caused handed over to learned capacity');
      assert.equal(endpoint.load.safeStart?.reason, 'queue');
    }
  });
});

describe('cold start with a router queue', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([SMALL, SMALL], ['--scrape-interval-ms', '100', '--admission-max-waiting', String(MAX_WAITING), '--admission-queue-length', '100', '--admission-queue-max-wait-ms', '20000']);
  });
  after(() => fleet.close());

  it('regression: the backlog of a burst sat in the engines instead of the router queue, where priorities and deadlines apply', async () => {
    const stop = watchQueues(fleet.engines);
    let routerQueuePeak = 0;
    const metricsTimer = setInterval(() => {
      void fetch(`${fleet.admin}/metrics`)
        .then((r) => r.text())
        .then((text) => (routerQueuePeak = Math.max(routerQueuePeak, Number(/^switchyard_queue_length (\d+)/m.exec(text)?.[1] ?? 0))))
        .catch(() => {});
    }, 50);
    const statuses = await burst(fleet, 60);
    clearInterval(metricsTimer);
    const peaks = stop();
    assert.deepEqual([...statuses], [[200, 60]], 'every request served');
    assert.ok(peaks.every((peak) => peak <= MAX_WAITING), `engine queues peaked at ${peaks.join('/')}`);
    assert.ok(routerQueuePeak >= 30, `the router queue held the backlog (peak ${routerQueuePeak})`);
  });
});

describe('cold start with a router queue, Redis, and a session key per client', () => {
  /** Engines of 8 slots, ~90 ms per request: a burst of 300 is served in about two seconds. */
  const ENGINE = { model: MODEL, knobs: { maxSeqs: 8, ttftMs: 50, itlMs: 10, outputTokens: 4 } };
  let redis: RedisServer;
  let fleet: Fleet;
  before(async () => {
    redis = await startRedisServer();
    // Redis' command timeout raised so a loaded test machine cannot degrade the lookups to hashing alone: the lookups must answer.
    fleet = await startFleet([ENGINE, ENGINE], ['--scrape-interval-ms', '100', '--admission-max-waiting', String(MAX_WAITING), '--admission-queue-length', '1000', '--admission-queue-max-wait-ms', '20000', '--redis-url', redis.url, '--redis-command-timeout-ms', '1000']);
    await waitForSharedStateUp(fleet.admin);
  });
  after(async () => {
    await fleet.close();
    await redis.stop();
  });

  it('regression: requests whose session lookups Redis answered together were all decided before any was sent, and overfilled one engine', async () => {
    // Redis pauses for 300 ms as the burst arrives, so the lookups' answers come back together, in one read: as
    // they do when a burst's lookups outrun one round trip (a benchmark's 2,000 clients against a Redis on the same host).
    const client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
    const paused = client.call('DEBUG', 'SLEEP', '0.3');
    const stop = watchQueues(fleet.engines);
    const statuses = await burst(fleet, 300, true);
    const peaks = stop();
    await paused;
    client.disconnect();
    assert.deepEqual([...statuses], [[200, 300]], 'every request served');
    // Before the fix: 79-136 waiting at an engine in this burst (225-619 in the cold-start benchmark's 2,000-client burst).
    assert.ok(peaks.every((peak) => peak <= MAX_WAITING), `engine queues peaked at ${peaks.join('/')}`);
  });
});

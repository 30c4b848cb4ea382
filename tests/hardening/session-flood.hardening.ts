/**
 * One client flooding unique session keys (issue 36, item 1), against a real
 * redis-server and a router process at the chart's heap cap
 * (`--max-old-space-size=384`). Each replica kept the assignments it made in
 * a table keyed by the raw session key (an `x-session-id` of up to the
 * 16 KiB header limit), bounded only by count: 16 connections sending unique
 * 15 KB keys grew the heap from 29 to 355 MiB and killed the router after
 * about 24,000 requests. And against a Redis at its memory cap, the same
 * flood's refused writes (OOM) opened the circuit breaker that also gates
 * quotas and fleet load, so every replica flapped into degraded mode.
 *
 * A bounded rerun of each: 9,000 requests with 14 KB keys must leave the heap
 * within 32 MiB of where 1,000 left it (the raw-key table held ~110 MiB more),
 * and a Redis answering OOM to every write must never open the breaker.
 * The 50,000-request measurement is loadtest/scenarios/micro/session-flood.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { postJson } from '../kit/harness.ts';
import { heldHeap, killHeapCappedRouter, metric, startHeapCappedRouter, type HeapCappedRouter } from './heap-capped-router.ts';

const MODEL = 'flood-model';
const KEY_BYTES = 14_000;
const CONCURRENCY = 16;



async function chat(started: HeapCappedRouter, sessionKey: string): Promise<number> {
  const response = await postJson(`${started.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }, { 'x-session-id': sessionKey });
  return response.status;
}

/** Sends `count` requests, each with a new session key of KEY_BYTES, CONCURRENCY at a time; each must get a 200. */
async function flood(started: HeapCappedRouter, first: number, count: number): Promise<void> {
  let next = first;
  const end = first + count;
  const filler = 'k'.repeat(KEY_BYTES - 12);
  const worker = async () => {
    while (next < end && started.exited === undefined) {
      const n = next++;
      const status = await chat(started, `${String(n).padStart(12, '0')}${filler}`);
      assert.equal(status, 200, `request ${n} answered ${status}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  assert.equal(started.exited, undefined, `the router exited (${started.exited ?? ''}): ${started.stderr}`);
}



describe('a flood of unique session keys', () => {
  let engine: EngineSimulator;
  let started: HeapCappedRouter | undefined;
  before(async () => {
    engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 256, ttftMs: 0, itlMs: 0, outputTokens: 1 } });
    await engine.listen();
  });
  after(async () => {
    await engine.close();
  });
  const stopRouter = async () => {
    await killHeapCappedRouter(started);
    started = undefined;
  };

  it('leaves the heap flat at the chart\'s heap cap: 9,000 requests with 14 KB keys within 32 MiB of 1,000', async (t) => {
    const redis: RedisServer = await startRedisServer();
    try {
      started = await startHeapCappedRouter(engine, redis.url, MODEL);
      await flood(started, 0, 1_000);
      const early = await heldHeap(started);
      await flood(started, 1_000, 9_000);
      const late = await heldHeap(started);
      t.diagnostic(`heap ${(early / 2 ** 20).toFixed(1)} MiB after 1,000 requests, ${(late / 2 ** 20).toFixed(1)} MiB after 10,000`);
      assert.ok(late - early < 32 * 2 ** 20, `the heap grew ${((late - early) / 2 ** 20).toFixed(1)} MiB`);
    } finally {
      await stopRouter();
      await redis.stop();
    }
  });

  it('against a Redis at its memory cap, refused session writes never open the breaker that gates quotas and fleet load', async (t) => {
    const redis: RedisServer = await startRedisServer({ config: ['maxmemory 4mb', 'maxmemory-policy noeviction'] });
    const admin = new Redis(redis.port, '127.0.0.1');
    try {
      // A slow Redis is an outage and should open the breaker; on a loaded 2-core test machine a 50 ms command
      // timeout sometimes passes under this flood, so the test allows 1 s: only the OOM replies are on trial.
      started = await startHeapCappedRouter(engine, redis.url, MODEL, ['--redis-command-timeout-ms', '1000']);
      // Past the cap: every write (a session's SET, the fleet and quota scripts) is now refused with OOM; reads still work.
      await admin.call('DEBUG', 'POPULATE', '128', 'fill', String(64 * 1024));
      await assert.rejects(admin.set('probe', '1'), /OOM/);
      // Counted from here: a replica's first publishes may go out before its connection is ready.
      for (let i = 0; (await metric(started.admin, 'switchyard_shared_state_up')) !== 1; i++) {
        assert.ok(i < 100, 'shared state never came up');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const opened = await metric(started.admin, 'switchyard_shared_state_breaker_transitions_total', 'to="open"');
      await flood(started, 0, 1_500);
      const text = await (await fetch(`${started.admin}/metrics`)).text();
      t.diagnostic(text.split('\n').filter((l) => /^switchyard_shared_state_(failures_total|breaker)/.test(l)).join(' | '));
      assert.ok((await metric(started.admin, 'switchyard_shared_state_failures_total', 'kind="server"')) > 0, 'the refused writes are counted');
      assert.equal(await metric(started.admin, 'switchyard_shared_state_breaker_transitions_total', 'to="open"'), opened, 'the breaker never opened');
      assert.equal(await metric(started.admin, 'switchyard_shared_state_up'), 1, 'Redis answers: shared state stays up');
    } finally {
      admin.disconnect();
      await stopRouter();
      await redis.stop();
    }
  });
});

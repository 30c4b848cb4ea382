/**
 * Malformed Redis replies against a live router process (issue 36, item 3).
 * A nil where the fleet script returns a replica's counts threw inside the
 * publish timer's promise and, with nothing to catch it, ended the process
 * within a second of connecting, on every replica at once and again after
 * each restart. The replies come from a fake Redis (tests/hardening/fuzz/fake-resp-server.ts,
 * in-process because a real redis-server cannot be made to send them):
 * first the exact reply of the finding, then random shapes and sizes to every
 * command the router sends. Throughout, the router must not exit, /livez must
 * answer 200, every request must be answered (200: Redis only ever improves a
 * decision) and the heap must stay bounded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { FakeRespServer, INFO_REPLY, randomResponder, resp, seededRandom } from './fuzz/fake-resp-server.ts';
import { sampleLivez } from './fuzz/livez-sampler.ts';
import { postJson } from '../kit/harness.ts';
import { heldHeap, killHeapCappedRouter, metric, startHeapCappedRouter, type HeapCappedRouter } from './heap-capped-router.ts';

const MODEL = 'replies-model';
const SECONDS = Number(process.env['SWITCHYARD_FUZZ_SECONDS'] ?? 20);
const SEED = Number(process.env['SWITCHYARD_FUZZ_SEED'] ?? 20_261_204);
/** Fleet rounds every 20 ms: many replies to the fleet script within a short test. */
const FAST_FLEET = ['--redis-publish-interval-ms', '20', '--redis-replica-ttl-ms', '200'];





/** Session-keyed chat requests, `concurrency` at a time, for `ms`: each must get a 200. */
async function traffic(started: HeapCappedRouter, ms: number, concurrency: number): Promise<number> {
  const until = performance.now() + ms;
  let sent = 0;
  const worker = async (w: number) => {
    for (let i = 0; performance.now() < until && started.exited === undefined; i++) {
      const response = await postJson(`${started.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }, { 'x-session-id': `s-${w}-${i % 50}` });
      assert.equal(response.status, 200, `request answered ${response.status}: ${response.body.toString().slice(0, 200)}`);
      sent++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  return sent;
}

describe('malformed Redis replies cannot crash the router', () => {
  let engine: EngineSimulator;
  let fake: FakeRespServer;
  let started: HeapCappedRouter | undefined;
  before(async () => {
    engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 256, ttftMs: 1, itlMs: 1, outputTokens: 2 } });
    await engine.listen();
  });
  after(async () => {
    await engine.close();
  });
  const stopRouter = async () => {
    await killHeapCappedRouter(started);
    started = undefined;
    await fake.stop();
  };

  it('a nil where the fleet script returns a replica\'s counts is no answer, not an exit', async () => {
    // The finding's reply: one live replica whose counts are nil (in today's triple shape, with its queued list). Everything else: nil (no session stored).
    fake = await new FakeRespServer((args) => {
      if (args[0] === 'INFO') return INFO_REPLY;
      if (args[0] === 'EVALSHA' || args[0] === 'EVAL') return args[1]?.length === 40 || args[0] === 'EVAL' ? resp.array([resp.bulk('other-replica'), resp.nil(), resp.array([])]) : resp.nil();
      return resp.nil();
    }).start();
    started = await startHeapCappedRouter(engine, fake.url, MODEL, FAST_FLEET);
    try {
      await traffic(started, 3_000, 4);
      assert.equal(started.exited, undefined, `the router exited (${started.exited ?? ''}): ${started.stderr}`);
      assert.ok((fake.seen.get('EVALSHA') ?? 0) + (fake.seen.get('EVAL') ?? 0) > 20, 'the fleet script was answered many times');
      assert.ok((await metric(started.admin, 'switchyard_shared_state_failures_total', 'command="fleet_publish",kind="invalid_reply"')) > 0, 'counted as an invalid reply');
      assert.equal((await fetch(`${started.admin}/livez`)).status, 200);
    } finally {
      await stopRouter();
    }
  });

  it('a 64 MiB reply to a session GET is dropped before it is buffered whole: the router\'s memory stays near its cap of 8 MiB a reply', async (t) => {
    // The finding: one 256 MiB reply to a session GET cost ~220 MB RSS. 64 MiB here keeps the test quick.
    const huge = resp.bulk(Buffer.alloc(64 * 2 ** 20, 0x65));
    // Scripts get an empty list (a valid fleet read of no other replica), so only the GET is on trial.
    fake = await new FakeRespServer((args) => (args[0] === 'INFO' ? INFO_REPLY : args[0] === 'GET' ? huge : args[0]?.startsWith('EVAL') === true ? resp.array([]) : resp.nil())).start();
    started = await startHeapCappedRouter(engine, fake.url, MODEL, FAST_FLEET);
    try {
      const rssBefore = await metric(started.admin, 'process_resident_memory_bytes');
      let rssPeak = rssBefore;
      const sampler = setInterval(() => {
        metric(started!.admin, 'process_resident_memory_bytes').then((rss) => (rssPeak = Math.max(rssPeak, rss)), () => {});
      }, 100);
      try {
        await traffic(started, 4_000, 4);
      } finally {
        clearInterval(sampler);
      }
      const gets = fake.seen.get('GET') ?? 0;
      t.diagnostic(`${gets} GETs answered with 64 MiB; RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, peak ${(rssPeak / 2 ** 20).toFixed(0)} MiB`);
      assert.equal(started.exited, undefined, `the router exited (${started.exited ?? ''}): ${started.stderr}`);
      assert.ok(gets >= 4, 'the router asked');
      assert.ok((await metric(started.admin, 'switchyard_shared_state_failures_total', 'command="oversized_reply"')) > 0, 'the dropped replies are counted');
      assert.ok(rssPeak - rssBefore < 96 * 2 ** 20, `RSS rose ${((rssPeak - rssBefore) / 2 ** 20).toFixed(0)} MiB`);
    } finally {
      await stopRouter();
    }
  });

  it(`random reply shapes and sizes to every command for ${SECONDS} s (seed ${SEED}): no exit, every request answered, heap bounded`, async (t) => {
    fake = await new FakeRespServer(randomResponder(seededRandom(SEED), { maxBulkBytes: 16 << 20 })).start();
    started = await startHeapCappedRouter(engine, fake.url, MODEL, FAST_FLEET);
    const livez = sampleLivez(`${started.admin}/livez`);
    try {
      await traffic(started, 2_000, 4);
      const heapAfterWarmUp = await heldHeap(started);
      let heapPeak = heapAfterWarmUp;
      const sampler = setInterval(() => {
        metric(started!.admin, 'nodejs_heap_size_used_bytes').then((heap) => (heapPeak = Math.max(heapPeak, heap)), () => {});
      }, 500);
      let sent: number;
      try {
        sent = await traffic(started, SECONDS * 1_000, 8);
      } finally {
        clearInterval(sampler);
      }
      const report = await livez.stop();
      assert.equal(started.exited, undefined, `the router exited (${started.exited ?? ''}): ${started.stderr}`);
      assert.deepEqual(report.failures, [], '/livez answered 200 throughout');
      const heapAfter = await heldHeap(started);
      const caught = await metric(started.admin, 'switchyard_background_failures_total');
      const commands = [...fake.seen].map(([name, count]) => `${name} ${count}`).join(', ');
      t.diagnostic(`${sent} requests; commands answered at random: ${commands}; ${(fake.bytesSent / 2 ** 20).toFixed(0)} MiB of replies; heap ${(heapAfterWarmUp / 2 ** 20).toFixed(0)} MiB after warm-up, peak ${(heapPeak / 2 ** 20).toFixed(0)} MiB, ${(heapAfter / 2 ** 20).toFixed(0)} MiB after; background failures caught ${caught}`);
      for (const command of ['GET', 'EVALSHA', 'INFO']) assert.ok((fake.seen.get(command) ?? 0) > 0, `the router sent ${command}`);
      // Replies of up to 16 MiB arrive now and then: each costs its size while it is read, and none may be kept.
      assert.ok(heapPeak < 256 * 2 ** 20, `heap peaked at ${(heapPeak / 2 ** 20).toFixed(0)} MiB (the cap is 384)`);
      assert.ok(heapAfter - heapAfterWarmUp < 32 * 2 ** 20, `the heap held ${((heapAfter - heapAfterWarmUp) / 2 ** 20).toFixed(0)} MiB more after the run`);
    } finally {
      await livez.stop().catch(() => undefined);
      await stopRouter();
    }
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EventLoopLagMonitor } from '../../router/admission/event-loop-lag.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { errorOf, holdOnEngine, postJson, send, sseData, startFleet, startInProcessRouter, waitFor, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-over';
const INTERVAL_MS = 100;
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

async function metric(fleet: Fleet, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${fleet.admin}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) if (pattern.test(line)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS));

describe('shedding on saturation', () => {
  let fleet: Fleet;
  before(async () => {
    // The test client is the trusted proxy, so its x-priority counts.
    fleet = await startFleet([{ model: MODEL, knobs: { maxSeqs: 1, ttftMs: 0, itlMs: 0 } }], ['--scrape-interval-ms', String(INTERVAL_MS), '--admission-max-waiting', '4', '--admission-queue-length', '0', '--server-trusted-proxies', '127.0.0.1']);
  });
  after(() => fleet.close());

  it('answers 429 with Retry-After at once, sends nothing upstream, and admits again once the queue drains', async () => {
    const engine = fleet.engines[0]!;
    const hold = holdOnEngine(engine.url, 6, MODEL); // 1 running, 5 waiting
    await waitFor(() => engine.scheduler.waiting === 5);
    await settle();
    const before = engine.requests;
    const response = await postJson(`${fleet.base}/v1/chat/completions`, chat);
    assert.equal(response.status, 429);
    assert.equal(errorOf(response).code, 'SWITCHYARD_OVERLOADED');
    assert.equal(errorOf(response).type, 'rate_limit_exceeded');
    assert.ok(Number(response.headers['retry-after']) >= 1);
    assert.equal(engine.requests - before, 0, 'a shed request never reaches the engine');
    assert.equal(await metric(fleet, /^switchyard_shed_total\{reason="saturated",priority="normal"\}/), 1);
    await hold.release();
    await waitFor(() => engine.scheduler.waiting === 0 && engine.scheduler.running === 0);
    await settle();
    assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, chat)).status, 200);
  });

  it('sheds low priority first', async () => {
    const engine = fleet.engines[0]!;
    const hold = holdOnEngine(engine.url, 3, MODEL); // 1 running, 2 waiting: half of maxWaiting 4
    await waitFor(() => engine.scheduler.waiting === 2).catch((err: unknown) => {
      throw new Error(`engine running ${engine.scheduler.running} waiting ${engine.scheduler.waiting}: ${String(err)}`);
    });
    await settle();
    const low = await postJson(`${fleet.base}/v1/chat/completions`, chat, { 'x-priority': 'low', 'x-sim-ttft-ms': '0' });
    assert.equal(low.status, 429);
    const normal = postJson(`${fleet.base}/v1/chat/completions`, chat);
    await waitFor(() => engine.scheduler.waiting === 3);
    await hold.release();
    assert.equal((await normal).status, 200);
  });
});

describe('the router queue', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet(
      [{ model: MODEL, knobs: { maxSeqs: 1, ttftMs: 0, itlMs: 0 } }],
      ['--scrape-interval-ms', String(INTERVAL_MS), '--admission-max-waiting', '2', '--admission-queue-length', '4', '--admission-queue-max-wait-ms', '1500'],
    );
  });
  after(() => fleet.close());

  it('holds a request while every candidate is saturated and sends it once one frees up', async () => {
    const engine = fleet.engines[0]!;
    const hold = holdOnEngine(engine.url, 3, MODEL);
    await waitFor(() => engine.scheduler.waiting === 2);
    await settle();
    const queued = postJson(`${fleet.base}/v1/chat/completions`, chat);
    await waitFor(() => fleet.router.inFlight === 1);
    assert.equal(await metric(fleet, /^switchyard_queue_length /), 1);
    await hold.release();
    const response = await queued;
    assert.equal(response.status, 200);
    assert.equal(await metric(fleet, /^switchyard_queued_total\{priority="normal"\}/), 1);
  });

  it('sheds a queued request when its wait expires, and drops one whose client leaves', async () => {
    const engine = fleet.engines[0]!;
    const hold = holdOnEngine(engine.url, 3, MODEL);
    await waitFor(() => engine.scheduler.waiting === 2);
    await settle();
    const started = Date.now();
    const expired = await postJson(`${fleet.base}/v1/chat/completions`, chat);
    assert.equal(expired.status, 429);
    assert.equal(errorOf(expired).code, 'SWITCHYARD_QUEUE_TIMEOUT');
    assert.ok(Date.now() - started >= 1400);
    const controller = new AbortController();
    const leaving = send(`${fleet.base}/v1/chat/completions`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat), signal: controller.signal }).catch(() => undefined);
    await waitFor(() => fleet.router.inFlight === 1);
    assert.equal(await metric(fleet, /^switchyard_queue_length /), 1);
    controller.abort();
    await leaving;
    await waitFor(() => fleet.router.inFlight === 0, 2_000);
    assert.equal(await metric(fleet, /^switchyard_queue_length /), 0);
    await hold.release();
  });
});

describe('router-wide caps', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([{ model: MODEL, knobs: { maxSeqs: 100, ttftMs: 0, itlMs: 20 } }], ['--admission-max-in-flight', '2', '--admission-max-connections', '4']);
  });
  after(() => fleet.close());

  it('answers 429 with Connection: close over the in-flight cap, never a reset', async () => {
    const streams = [0, 1].map(() => postJson(`${fleet.base}/v1/chat/completions`, { ...chat, stream: true }, { 'x-sim-output-tokens': '50' }));
    await waitFor(() => fleet.router.inFlight === 2);
    const response = await postJson(`${fleet.base}/v1/chat/completions`, chat);
    assert.equal(response.status, 429);
    assert.equal(errorOf(response).code, 'SWITCHYARD_ROUTER_BUSY');
    assert.equal(response.headers['connection'], 'close');
    assert.equal(response.headers['retry-after'], '1');
    for (const stream of await Promise.all(streams)) assert.equal(sseData(stream.body).at(-1), '[DONE]');
  });

  it('answers 429 with Connection: close over the connection cap when no connection is idle', async () => {
    // Five connections each in the middle of a request (headers sent, body not yet): none is idle.
    const busy = await Promise.all(
      Array.from({ length: 5 }, () => new Promise<Socket>((resolve) => {
        const socket = connect(Number(new URL(fleet.base).port), '127.0.0.1', () => {
          socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: r\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
          resolve(socket);
        });
        socket.on('error', () => {});
      })),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const response = await postJson(`${fleet.base}/v1/chat/completions`, chat);
      assert.equal(response.status, 429);
      assert.equal(response.headers['connection'], 'close');
    } finally {
      for (const socket of busy) socket.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, chat)).status, 200, 'admitted again once connections close');
  });
});

describe('event-loop lag', () => {
  let fleet: Fleet;
  // No start-up grace, so the test need not wait it out.
  const lag = new EventLoopLagMonitor({ graceMs: 0 });
  before(async () => {
    fleet = await startFleet([{ model: MODEL, knobs: { ttftMs: 0, itlMs: 0 } }], ['--admission-event-loop-lag-ms', '100'], [], { lagMonitor: lag });
  });
  after(() => fleet.close());

  /** Blocks this event loop (the router shares it) for `ms`, as a stuck handler would. */
  const block = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end) {
      // busy
    }
  };

  it('regression: a one-off stall shed the requests that arrived during it (they would have been served)', async () => {
    const request = postJson(`${fleet.base}/v1/chat/completions`, chat);
    block(400);
    assert.equal((await request).status, 200);
  });

  it('sheds new work with 429 while the loop stays behind, and recovers', async () => {
    let ticks = 0;
    let blocking = true;
    // Blocks every turn of the loop, letting the lag probe and I/O run in between.
    const hog = (async () => {
      while (blocking) {
        block(250);
        ticks++;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    })();
    await waitFor(() => ticks >= 5);
    const response = await postJson(`${fleet.base}/v1/chat/completions`, chat);
    blocking = false;
    await hog;
    assert.equal(response.status, 429);
    assert.equal(errorOf(response).code, 'SWITCHYARD_EVENT_LOOP_LAG');
    // Recovery takes a few probe ticks on time; how long those take follows the machine, so wait for them (bounded).
    await waitFor(() => lag.sustainedLagMs < 100, 5_000);
    assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, chat)).status, 200);
  });
});

describe('upstream connection cap', () => {
  let fleet: Fleet;
  before(async () => {
    // Every open request holds one upstream connection; the engine itself has room for 100.
    fleet = await startFleet([{ model: MODEL, knobs: { maxSeqs: 100, ttftMs: 60_000 } }], ['--upstream-connections-per-endpoint', '2', '--admission-queue-length', '0']);
  });
  after(() => fleet.close());

  it('counts an endpoint at its connection cap as saturated: the next request is shed, not parked unseen', async () => {
    const engine = fleet.engines[0]!;
    const controller = new AbortController();
    const held = Array.from({ length: 2 }, () =>
      fetch(`${fleet.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat), signal: controller.signal }).catch(() => undefined),
    );
    await waitFor(() => engine.scheduler.running === 2);
    const response = await postJson(`${fleet.base}/v1/chat/completions`, chat);
    assert.equal(response.status, 429, 'without the cap in admission this request would wait for a connection for a minute');
    assert.equal(errorOf(response).code, 'SWITCHYARD_OVERLOADED');
    assert.equal(engine.requests, 2);
    controller.abort();
    await Promise.all(held);
  });
});

describe('the adaptive engine queue (no fixed maxWaiting)', () => {
  let fleet: Fleet;
  let dir: string;
  before(async () => {
    // 64 slots, ~20 ms per answer: it drains ~3.2 a millisecond, 6 while the router refills a slot (2 ms).
    const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 64, ttftMs: 10, itlMs: 1, outputTokens: 9 } });
    await engine.listen();
    dir = mkdtempSync(join(tmpdir(), 'switchyard-allowance-'));
    const config = join(dir, 'router.json');
    writeFileSync(config, JSON.stringify({ load: { capacity: { [engine.url]: 64 } } }));
    const started = await startInProcessRouter(['--backend', engine.url, '--config', config], 1);
    fleet = { ...started, engines: [engine], close: async () => (await started.router.close(), await engine.close()) };
  });
  after(async () => {
    await fleet.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("derives each engine's queue from what it drains while the router refills a slot", async () => {
    const debug = async () => ((await (await fetch(`${fleet.admin}/debug/endpoints`)).json()) as { endpoints: { load: { queueAllowance: number; meanAnswerMs: number | null } }[] }).endpoints[0]?.load;
    assert.equal((await debug())?.queueAllowance, 0, 'nothing known yet: free batch slots only');
    for (let i = 0; i < 8; i++) assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, { ...chat, stream: true })).status, 200);
    const load = await debug();
    assert.ok(load?.meanAnswerMs !== null && (load?.meanAnswerMs ?? 0) >= 18, `mean answer ${String(load?.meanAnswerMs)} ms`);
    // 64 / ~20 ms × 2 ms = 6; timers that fire late make the answer a little longer.
    assert.ok(load !== undefined && load.queueAllowance >= 3 && load.queueAllowance <= 7, `allowance ${String(load?.queueAllowance)}`);
  });
});

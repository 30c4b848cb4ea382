import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitForModels } from '../kit/processes.ts';
import { postJson, servedBy, startFleet, startRouterProcess, waitFor, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-load';
const INTERVAL_MS = 100;
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
let counter = 0;

/** Sends one quick request through the router and returns the index of the engine that served it. */
async function route(fleet: Fleet, headers: Record<string, string> = {}): Promise<number> {
  const requestId = `lr-${counter++}`;
  const response = await postJson(`${fleet.base}/v1/chat/completions`, chat, { 'x-request-id': requestId, ...headers });
  assert.equal(response.status, 200);
  return servedBy(fleet.engines, requestId);
}

interface DebugEndpoint {
  id: string;
  scrape: { stale: boolean; ageMs: number | null; lastError: string | null; waiting: number | null };
}
async function debug(fleet: Fleet): Promise<DebugEndpoint[]> {
  return ((await (await fetch(`${fleet.admin}/debug/endpoints`)).json()) as { endpoints: DebugEndpoint[] }).endpoints;
}

describe('routing on scraped load', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet(
      [
        { model: MODEL, knobs: { maxSeqs: 2, ttftMs: 0, itlMs: 0 } },
        { model: MODEL, knobs: { maxSeqs: 2, ttftMs: 0, itlMs: 0 } },
      ],
      ['--scrape-interval-ms', String(INTERVAL_MS), '--scrape-timeout-ms', '80', '--routing-policy', 'least-load'],
    );
  });
  after(() => fleet.close());

  it('stops sending to an engine with a long queue within two scrape intervals, and resumes within two after it drains', async () => {
    const busy = fleet.engines[0]!;
    // Build a queue on engine 0 behind the router's back: 2 running, 8 waiting.
    const hold = new AbortController();
    const held = Array.from({ length: 10 }, () =>
      fetch(`${busy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000' },
        body: JSON.stringify(chat),
        signal: hold.signal,
      }).catch(() => undefined),
    );
    await waitFor(() => busy.scheduler.waiting === 8);
    const queuedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS));
    const afterQueue: number[] = [];
    for (let i = 0; i < 30; i++) afterQueue.push(await route(fleet));
    assert.ok(afterQueue.every((engine) => engine === 1), `requests still reached the queued engine: ${afterQueue.join('')}`);
    assert.ok(Date.now() - queuedAt < 5_000);

    hold.abort();
    await Promise.all(held);
    await waitFor(() => busy.scheduler.waiting === 0 && busy.scheduler.running === 0);
    await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS));
    const afterDrain: number[] = [];
    for (let i = 0; i < 40; i++) afterDrain.push(await route(fleet));
    assert.ok(afterDrain.filter((engine) => engine === 0).length >= 8, `the drained engine got no traffic back: ${afterDrain.join('')}`);
  });

  it('marks load stale when scrapes return garbage or hang, and keeps routing on in-flight counts', async () => {
    const [a, b] = fleet.engines as [NonNullable<Fleet['engines'][0]>, NonNullable<Fleet['engines'][0]>];
    a.knobs.metricsGarbage = true;
    await new Promise((resolve) => setTimeout(resolve, 5 * INTERVAL_MS));
    let view = await debug(fleet);
    assert.equal(view.find((e) => e.id === a.url)?.scrape.stale, true);
    assert.match(view.find((e) => e.id === a.url)?.scrape.lastError ?? '', /unusable metrics/);
    assert.equal(view.find((e) => e.id === b.url)?.scrape.stale, false);
    const served = new Set<number>();
    for (let i = 0; i < 30; i++) served.add(await route(fleet));
    assert.deepEqual([...served].sort(), [0, 1], 'both engines still serve');

    a.knobs.metricsGarbage = false;
    a.knobs.metricsHang = true;
    await new Promise((resolve) => setTimeout(resolve, 6 * INTERVAL_MS));
    view = await debug(fleet);
    assert.equal(view.find((e) => e.id === a.url)?.scrape.stale, true);
    const bAge = view.find((e) => e.id === b.url)?.scrape.ageMs ?? Infinity;
    assert.ok(bAge <= 3 * INTERVAL_MS, `a hung engine delayed the other engine's scrape (age ${bAge} ms)`);
    for (let i = 0; i < 10; i++) assert.ok((await route(fleet)) >= 0);
    a.knobs.metricsHang = false;
    // Fresh again once scrapes recover.
    await waitFor(() => {
      fleet.router.view.tick();
      return [...fleet.router.view.all()].every((s) => !s.stale);
    }, 2_000);
  });
});

describe('session affinity end to end', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet(Array.from({ length: 4 }, () => ({ model: MODEL, knobs: { maxSeqs: 1000, ttftMs: 0, itlMs: 0 } })));
  });
  after(() => fleet.close());

  it('keeps each session key on one engine across 10,000 requests', async () => {
    const home = new Map<string, Set<number>>();
    const keys = Array.from({ length: 100 }, (_, i) => `session-${i}`);
    let next = 0;
    const worker = async () => {
      while (next < 10_000) {
        const key = keys[next++ % keys.length] as string;
        const engine = await route(fleet, { 'x-session-id': key });
        let engines = home.get(key);
        if (!engines) home.set(key, (engines = new Set()));
        engines.add(engine);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    for (const [key, engines] of home) assert.equal(engines.size, 1, `${key} moved between engines ${[...engines].join(',')}`);
    const used = new Set([...home.values()].map((s) => [...s][0]));
    assert.equal(used.size, 4, 'keys spread over all engines');
  });

  it('sends each session key to the same engine from two separately started router processes', async () => {
    const other = await startRouterProcess([
      '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0',
      ...fleet.engines.flatMap((e) => ['--backend', e.url]),
    ]);
    try {
      const otherBase = `http://127.0.0.1:${other.traffic}`;
      await waitForModels(otherBase);
      for (let i = 0; i < 200; i++) {
        const key = `two-routers-${i}`;
        const here = await route(fleet, { 'x-session-id': key });
        const requestId = `lr-other-${i}`;
        const response = await postJson(`${otherBase}/v1/chat/completions`, chat, { 'x-request-id': requestId, 'x-session-id': key });
        assert.equal(response.status, 200);
        assert.equal(servedBy(fleet.engines, requestId), here, `${key} went to different engines`);
      }
    } finally {
      other.child.kill('SIGTERM');
      await other.exit;
    }
  });

  it('uses the OpenAI user field as the session key when no header is sent', async () => {
    const engines = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const requestId = `user-${i}`;
      await postJson(`${fleet.base}/v1/chat/completions`, { ...chat, user: 'alice' }, { 'x-request-id': requestId });
      engines.add(servedBy(fleet.engines, requestId));
    }
    assert.equal(engines.size, 1);
  });
});

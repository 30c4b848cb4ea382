/**
 * Replicas that agree through a real redis-server: two routers in this
 * process over the same engine simulators, sharing fleet in-flight counts
 * and session assignments.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { postJson, servedBy, startInProcessRouter, waitFor, waitForSharedStateUp, type StartedRouter } from '../kit/harness.ts';

const MODEL = 'shared-model';

type Replica = StartedRouter;

/** Starts a replica and waits until its shared state is up (a replica still connecting routes on its own state alone). */
async function startReplica(backends: readonly string[], flags: readonly string[]): Promise<Replica> {
  const replica = await startInProcessRouter([...backends.flatMap((b) => ['--backend', b]), ...flags], backends.length);
  await waitForSharedStateUp(replica.admin);
  return replica;
}

function chat(base: string, id: string, headers: Record<string, string> = {}) {
  return postJson(`${base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }, { 'x-request-id': id, ...headers });
}

/** `count` streams through `base` that the engine holds before its first token until `signal` aborts them. */
function holdStreams(base: string, count: number, idPrefix: string, signal: AbortSignal): Promise<unknown>[] {
  return Array.from({ length: count }, (_, i) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000', 'x-request-id': `${idPrefix}-${i}` },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hold' }], stream: true }),
      signal,
    }).catch(() => undefined),
  );
}

async function metric(admin: string, series: string): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('replicas sharing state through Redis', () => {
  let redis: RedisServer;
  const engines: EngineSimulator[] = [];
  const replicas: Replica[] = [];
  let flags: string[];

  before(async () => {
    redis = await startRedisServer();
    for (let i = 0; i < 3; i++) {
      const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 8, ttftMs: 1, itlMs: 1, outputTokens: 2 } });
      await engine.listen();
      engines.push(engine);
    }
    flags = ['--redis-url', redis.url, '--redis-publish-interval-ms', '50', '--redis-replica-ttl-ms', '400', '--sessions-local-cache-ms', '0', '--routing-policy', 'auto'];
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.router.close()));
    await Promise.all(engines.map((e) => e.close()));
    await redis.stop();
  });

  it("routes on the other replica's open requests, which its own scrape has not seen", async () => {
    // Scrapes far apart: only the shared counts can tell B what A sent since.
    const slow = [...flags, '--scrape-interval-ms', '60000', '--routing-policy', 'least-load'];
    // A knows only the first engine, so everything it holds open is there.
    const a = await startReplica([engines[0]!.url], slow);
    const b = await startReplica([engines[0]!.url, engines[1]!.url], slow);
    replicas.push(a, b);
    await waitFor(() => [...b.router.view.all()].every((s) => s.scraped !== undefined));
    const held = new AbortController();
    const holds = holdStreams(a.base, 4, 'hold', held.signal);
    try {
      await waitFor(() => [...a.router.view.all()].reduce((n, s) => n + s.inFlight, 0) === 4);
      // B sees A's four within a few publish intervals, on the engine they are on.
      const [first, second] = [...b.router.view.all()];
      await waitFor(() => first!.othersInFlight === 4, 2_000);
      assert.equal(second!.othersInFlight, 0);
      assert.equal(first!.loadScore > second!.loadScore, true);
      // Its own scrape (taken before) shows both idle; the shared counts send everything to the second engine.
      for (let i = 0; i < 4; i++) {
        const response = await chat(b.base, `fleet-${i}`);
        assert.equal(response.status, 200);
        assert.equal(servedBy(engines, `fleet-${i}`), 1);
      }
    } finally {
      held.abort();
      await Promise.all(holds);
      await Promise.all(replicas.splice(0).map((r) => r.router.close()));
    }
  });

  it('tells the other replica what waits in its router queue, and that one leaves it its even share of the full engine', async () => {
    // One engine of 2 slots, no waiting allowed there, and four requests held at it through A.
    const small = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 2, ttftMs: 1, itlMs: 1, outputTokens: 2 } });
    await small.listen();
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-share-'));
    const config = join(dir, 'capacity.json');
    writeFileSync(config, JSON.stringify({ load: { capacity: { [small.url]: 2 } } }));
    const bounded = [...flags, '--config', config, '--admission-max-waiting', '0'];
    const a = await startReplica([small.url], bounded);
    const b = await startReplica([small.url], bounded);
    replicas.push(a, b);
    const held = new AbortController();
    const holds = holdStreams(a.base, 4, 'share', held.signal);
    const shareOnB = async () => {
      const doc = (await (await fetch(`${b.admin}/debug/endpoints`)).json()) as { endpoints: { fleetShare: { replicas: number; seat: number } | null }[] };
      return doc.endpoints[0]?.fleetShare;
    };
    try {
      // A holds what it takes its share of the 2 slots to be and queues the rest.
      await waitFor(() => (a.router.view.queuedByModel.get(MODEL) ?? 0) > 0, 2_000);
      const [engine] = [...b.router.view.all()];
      // Replicas an earlier test closed stay live until their heartbeats expire (400 ms).
      await waitFor(() => engine!.fleetShare?.replicas === 2, 2_000);
      const share = await shareOnB();
      assert.deepEqual(share, engine!.fleetShare, '/debug/endpoints shows the seat');
      held.abort();
      await Promise.all(holds);
      await waitFor(() => engine!.fleetShare === undefined, 2_000);
      assert.equal(await shareOnB(), null, "A's clients left, its queue emptied, and B fills the engine again");
      assert.equal(a.router.view.queuedByModel.size, 0);
    } finally {
      held.abort();
      await Promise.all(holds);
      await Promise.all(replicas.splice(0).map((r) => r.router.close()));
      await small.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps existing conversations on their engine when an engine is added, on every replica', async () => {
    const a = await startReplica([engines[0]!.url, engines[1]!.url], flags);
    replicas.push(a);
    const first = new Map<string, number>();
    for (let i = 0; i < 20; i++) {
      assert.equal((await chat(a.base, `first-${i}`, { 'x-session-id': `conversation-${i}` })).status, 200);
      first.set(`conversation-${i}`, servedBy(engines, `first-${i}`));
    }
    // A second replica that already sees a third engine: rendezvous hashing alone would move about a third.
    const b = await startReplica(engines.map((e) => e.url), flags);
    replicas.push(b);
    for (let i = 0; i < 20; i++) {
      assert.equal((await chat(b.base, `again-${i}`, { 'x-session-id': `conversation-${i}` })).status, 200);
      assert.equal(servedBy(engines, `again-${i}`), first.get(`conversation-${i}`), `conversation-${i} moved`);
    }
    // New conversations do use the new engine.
    const fresh = new Set<number>();
    for (let i = 0; i < 20; i++) {
      assert.equal((await chat(b.base, `new-${i}`, { 'x-session-id': `new-conversation-${i}` })).status, 200);
      fresh.add(servedBy(engines, `new-${i}`));
    }
    assert.ok(fresh.has(2), 'the added engine takes new conversations');
    assert.equal(await metric(b.admin, 'switchyard_session_lookups_total{result="redis"}'), 20);
    await Promise.all(replicas.splice(0).map((r) => r.router.close()));
  });

  it('sends a shared document where another replica placed it (prefix affinity, keyless requests)', async () => {
    const prefix = [...flags, '--routing-policy', 'prefix-affinity'];
    // A knows only the first engine, so it places every document there; B knows all three and,
    // on its own, would place each where its load view or the document's hash says.
    const a = await startReplica([engines[0]!.url], prefix);
    const b = await startReplica(engines.map((e) => e.url), prefix);
    replicas.push(a, b);
    // A replica routes its first requests before its first scrape on what it knows without one.
    await waitFor(() => [...b.router.view.all()].every((s) => s.scraped !== undefined));
    const documents = Array.from({ length: 6 }, (_, d) => `document ${d} `.repeat(800));
    const ask = (base: string, d: number, id: string) =>
      postJson(`${base}/v1/chat/completions`, { model: MODEL, max_tokens: 2, messages: [{ role: 'system', content: documents[d] }, { role: 'user', content: `question ${id}` }] }, { 'x-request-id': id });
    for (let d = 0; d < documents.length; d++) assert.equal((await ask(a.base, d, `place-${d}`)).status, 200);
    // The placements are stored after the decision, not awaited by the request.
    for (const deadline = Date.now() + 5_000; (await metric(a.admin, 'switchyard_shared_state_command_duration_seconds_count{command="prefix_placement_set"}')) < documents.length; ) {
      assert.ok(Date.now() < deadline, 'A stored its placements');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (let d = 0; d < documents.length; d++) {
      assert.equal((await ask(b.base, d, `follow-${d}`)).status, 200);
      // By chance all six would land on engine 0 one time in 729.
      assert.equal(servedBy(engines, `follow-${d}`), 0, `document ${d} went where B would have placed it itself`);
    }
    assert.equal(await metric(b.admin, 'switchyard_prefix_placement_lookups_total{result="redis"}'), documents.length);
    // A conversation's later turns go by its own hash, never looked up.
    assert.equal(
      (await postJson(`${b.base}/v1/chat/completions`, { model: MODEL, max_tokens: 2, messages: [{ role: 'system', content: documents[0] }, { role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'more' }] })).status,
      200,
    );
    assert.equal(await metric(b.admin, 'switchyard_prefix_placement_lookups_total{result="redis"}') + (await metric(b.admin, 'switchyard_prefix_placement_lookups_total{result="miss"}')), documents.length);
    await Promise.all(replicas.splice(0).map((r) => r.router.close()));
  });

  it('moves a conversation only off an engine that fails the filters, records why, and the other replica follows', async () => {
    const capped = [...flags, '--admission-max-in-flight-per-endpoint', '2'];
    const a = await startReplica([engines[0]!.url, engines[1]!.url], capped);
    const b = await startReplica([engines[0]!.url, engines[1]!.url], capped);
    replicas.push(a, b);
    const session = { 'x-session-id': 'moving-conversation' };
    assert.equal((await chat(a.base, 'move-0', session)).status, 200);
    const home = servedBy(engines, 'move-0');
    const held = new AbortController();
    const holds = Array.from({ length: 2 }, (_, i) =>
      fetch(`${a.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000', ...session, 'x-request-id': `move-hold-${i}` },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hold' }], stream: true }),
        signal: held.signal,
      }).catch(() => undefined),
    );
    try {
      // The router counts a request in flight once it is sent; the engine records it once it has read it.
      await waitFor(() => [...a.router.view.all()].some((s) => s.inFlight === 2) && servedBy(engines, 'move-hold-1') !== -1 && servedBy(engines, 'move-hold-0') !== -1);
      assert.equal(servedBy(engines, 'move-hold-0'), home, 'the held requests stayed home');
      assert.equal(servedBy(engines, 'move-hold-1'), home, 'the held requests stayed home');
      // Home is at this replica's per-endpoint cap: saturated, so the conversation moves.
      assert.equal((await chat(a.base, 'move-1', session)).status, 200);
      const moved = servedBy(engines, 'move-1');
      assert.notEqual(moved, home);
      assert.equal(await metric(a.admin, 'switchyard_session_moves_total{reason="saturated"}'), 1);
      held.abort();
      await Promise.all(holds);
      await waitFor(() => [...a.router.view.all()].every((s) => s.inFlight === 0));
      // Home has room again, but the move was recorded: both replicas follow it.
      for (const [i, replica] of [a, b].entries()) {
        assert.equal((await chat(replica.base, `move-after-${i}`, session)).status, 200);
        assert.equal(servedBy(engines, `move-after-${i}`), moved, `replica ${i} follows the move`);
      }
    } finally {
      held.abort();
      await Promise.all(holds);
    }
  });
});

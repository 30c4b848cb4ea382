import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint } from '../../discovery/endpoint.ts';
import type { EndpointState } from './endpoint-state.ts';
import { LoadView, type LoadSettings } from './load-view.ts';

const endpoint = (id: string, models: string[] | undefined, extra: Partial<Endpoint> = {}): Endpoint => ({
  id,
  url: `http://127.0.0.1:${id.length + 1000}/prefix/`,
  models,
  labels: {},
  ready: true,
  draining: false,
  ...extra,
});

const SETTINGS: LoadSettings = {
  maxScrapeAgeMs: 3_000,
  defaultCapacity: 256,
  ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 0.5 },
};

function fixture(count = 2) {
  const clock = { now: 1_000_000 };
  const view = new LoadView(SETTINGS, () => clock.now);
  view.update({ version: 1, endpoints: Array.from({ length: count }, (_, i) => endpoint(`e${i}`, ['m'])) });
  const states = [...view.all()];
  return { clock, view, states };
}

const gauges = (waiting: number, running: number, kv?: number) => new Map([['m', { waiting, running, kvCacheUsage: kv }]]);
/** The estimated outstanding work, read back from the load score (capacity unknown: the default). */
const outstanding = (state: { loadScore: number }) => Math.round(state.loadScore * SETTINGS.defaultCapacity);

describe('load view', () => {
  it('indexes routable endpoints by model and knows models of unroutable ones', () => {
    const view = new LoadView(SETTINGS);
    assert.equal(view.synced, false);
    view.update({
      version: 1,
      endpoints: [endpoint('a', ['m1']), endpoint('b', ['m1', 'm2']), endpoint('c', ['m3'], { ready: false }), endpoint('d', ['m4'], { draining: true }), endpoint('e', undefined)],
    });
    assert.equal(view.synced, true);
    assert.deepEqual(view.candidates('m1').map((s) => s.id), ['a', 'b']);
    assert.deepEqual(view.candidates('m3'), []);
    assert.equal(view.knowsModel('m3'), true);
    assert.equal(view.knowsModel('m4'), true);
    assert.equal(view.knowsModel('zzz'), false);
    assert.deepEqual(view.routableModels(), ['m1', 'm2']);
    assert.equal([...view.all()].find((s) => s.id === 'a')?.basePath, '/prefix');
  });

  it('records the parent routable endpoints report for an adapter, the smallest when they disagree', () => {
    const view = new LoadView(SETTINGS);
    const lora = (id: string, parents: [string, string][], extra: Partial<Endpoint> = {}) => endpoint(id, ['base', ...parents.map(([m]) => m)], { adapters: new Map(parents), ...extra });
    view.update({
      version: 1,
      endpoints: [
        lora('b', [['sql', 'base-v2'], ['chat', 'base']]),
        lora('a', [['sql', 'base-v1']]),
        lora('c', [['chat', 'zzz'], ['down', 'base']], { ready: false }),
        endpoint('d', ['plain', 'chat']),
      ],
    });
    assert.equal(view.adapterParent('sql'), 'base-v1', 'the smallest, whatever the endpoint order');
    assert.equal(view.adapterParent('chat'), 'base', 'an unroutable endpoint and one without a parent change nothing');
    assert.equal(view.adapterParent('down'), undefined, 'only routable endpoints count');
    assert.equal(view.adapterParent('base'), undefined);
    assert.equal(view.adapterParent('plain'), undefined);
    view.update({ version: 2, endpoints: [endpoint('b', ['base', 'sql', 'chat'])] });
    assert.equal(view.adapterParent('sql'), undefined, 'forgotten with the endpoints that reported it');
  });

  it('keeps counters of endpoints that stay and settles requests of endpoints that left', () => {
    const { view, states } = fixture();
    const [a, b] = states as [NonNullable<(typeof states)[0]>, NonNullable<(typeof states)[0]>];
    const ta = view.begin(a);
    view.begin(a);
    const tb = view.begin(b);
    view.update({ version: 2, endpoints: [endpoint('e0', ['m'])] });
    assert.equal(view.candidates('m')[0], a, 'same state object for an endpoint that stays');
    assert.equal(a.inFlight, 2);
    assert.equal(b.present, false);
    assert.equal(b.routable, false);
    view.settle(b, tb);
    view.settle(a, ta);
    assert.equal(b.inFlight, 0);
    assert.equal(a.inFlight, 1);
  });

  it('reports each departure once, after the endpoint stopped being present, and gives a returning endpoint a new state', () => {
    const { view, states } = fixture(3);
    const departed: { id: string; present: boolean }[] = [];
    view.onDeparture = (state) => departed.push({ id: state.id, present: state.present });
    view.update({ version: 2, endpoints: [endpoint('e0', ['m'])] });
    assert.deepEqual(departed, [
      { id: 'e1', present: false },
      { id: 'e2', present: false },
    ]);
    view.update({ version: 3, endpoints: [endpoint('e0', ['m']), endpoint('e1', ['m'])] });
    assert.equal(departed.length, 2, 'a set without departures reports none');
    const returned = [...view.all()].find((s) => s.id === 'e1');
    assert.notEqual(returned, states[1], 'a returning endpoint starts afresh');
    assert.equal(states[1]?.present, false, 'its old state stays absent for late writes');
  });

  it('counts requests sent since the last scrape, and only those', () => {
    const { view, states } = fixture(1);
    const a = states[0]!;
    const before = view.begin(a);
    view.recordScrape(a, gauges(0, 1));
    assert.equal(a.sentSinceScrape, 0, 'the scrape now counts the earlier request');
    const after = view.begin(a);
    assert.equal(a.sentSinceScrape, 1);
    view.settle(a, before);
    assert.equal(a.sentSinceScrape, 1, 'an earlier request ending does not touch the new count');
    view.settle(a, after);
    assert.equal(a.sentSinceScrape, 0);
    assert.equal(a.inFlight, 0);
  });

  it("splits requests sent around a scrape by the engine's own count, so finished ones are not counted twice", () => {
    for (const { engineRunning, sent, atScrape, afterTwoFinish } of [
      { engineRunning: 3, sent: 0, atScrape: 3, afterTwoFinish: 1 }, // the engine had both: they free its slots as they end
      { engineRunning: 2, sent: 1, atScrape: 3, afterTwoFinish: 1 }, // it had one of them, whichever it was
      { engineRunning: 1, sent: 2, atScrape: 3, afterTwoFinish: 1 }, // it had neither yet
      // It shows less than it surely had: nothing is taken as counted, and the three still open are
      // the floor (not yet read by the engine, or finished with their answers on the way).
      { engineRunning: 0, sent: 2, atScrape: 3, afterTwoFinish: 1 },
      { engineRunning: 9, sent: 2, atScrape: 11, afterTwoFinish: 9 }, // load it cannot see: whose they are is unknown, so they stay uncounted
    ]) {
      const { clock, view, states } = fixture(1);
      const a = states[0]!;
      view.tick();
      const early = view.begin(a);
      clock.now += 100;
      view.tick();
      const justBefore = view.begin(a);
      clock.now += 5;
      view.markScrapeStart(a);
      const during = [justBefore, view.begin(a)]; // sent 5 ms before the scrape began, and while it was out
      view.recordScrape(a, gauges(0, engineRunning));
      const label = `engine running ${engineRunning}`;
      assert.equal(a.sentSinceScrape, sent, label);
      assert.equal(outstanding(a), atScrape, label);
      for (const token of during) view.settle(a, token);
      assert.equal(outstanding(a), afterTwoFinish, label);
      view.settle(a, early);
      assert.equal(a.doneSinceScrape, 1 + 2 - sent, `${label}: the early request was counted by the scrape and has finished`);
      assert.equal(outstanding(a), Math.max(0, afterTwoFinish - 1), label);
    }
  });

  it('leaves requests sent around a scrape uncounted when the engine holds more than is open', () => {
    const { clock, view, states } = fixture(1);
    const a = states[0]!;
    view.tick();
    const [early, finishing] = [view.begin(a), view.begin(a)];
    clock.now += 100;
    view.tick();
    view.markScrapeStart(a);
    const during = view.begin(a);
    view.settle(a, finishing); // after the engine took its numbers, before they arrived
    view.recordScrape(a, gauges(0, 3));
    assert.equal(a.sentSinceScrape, 1, 'three counted, two open: the excess could be anyone\'s, so the one sent during the scrape stays uncounted');
    assert.equal(outstanding(a), 4);
    view.settle(a, during);
    view.settle(a, early);
    assert.equal(outstanding(a), 2, 'over, the safe way, until the next scrape');
  });

  it('learns no capacity from a queue that waits for an adapter slot, and still counts it as waiting', () => {
    const waitsElsewhere = new WeakSet<object>();
    const view = new LoadView({ ...SETTINGS, queueWaitsElsewhere: (attributes) => waitsElsewhere.has(attributes) });
    view.update({ version: 1, endpoints: [endpoint('lora', ['m']), endpoint('plain', ['m'])] });
    const [lora, plain] = [...view.all()] as [EndpointState, EndpointState];
    waitsElsewhere.add(lora.attributes);
    for (const state of [lora, plain]) view.recordScrape(state, gauges(5, 2));
    view.tick();
    assert.equal(plain.learnedCapacity, 2, 'a full batch: 2 running behind a queue');
    assert.equal(lora.learnedCapacity, undefined, 'requests waiting for an adapter slot say nothing of the batch');
    assert.equal(lora.estimatedWaiting, 5, 'they do wait there');
  });

  it('uses scraped load while fresh and falls back to in-flight counts once stale', () => {
    const { clock, view, states } = fixture(1);
    const a = states[0]!;
    assert.equal(a.stale, true, 'no scrape yet');
    view.recordScrape(a, gauges(3, 10, 0.5));
    view.tick();
    assert.equal(a.stale, false);
    assert.equal(a.estimatedWaiting, 3);
    assert.equal(a.kvCacheUsage, 0.5);
    assert.equal(a.loadScore, 13 / 10, 'a queue behind 10 running taught capacity 10');
    clock.now += 3_001;
    view.tick();
    assert.equal(a.stale, true);
    assert.equal(a.estimatedWaiting, 0);
    assert.equal(a.kvCacheUsage, 0);
    assert.equal(a.loadScore, 0);
    assert.equal(a.scraped?.waiting, 3, 'the last good value is kept for display');
  });

  it('learns capacity only from a scrape that shows a queue', () => {
    const { view, states } = fixture(1);
    const a = states[0]!;
    view.recordScrape(a, gauges(0, 50));
    assert.equal(a.capacity, undefined, 'running 50 with no queue says nothing about capacity');
    view.recordScrape(a, gauges(4, 64));
    assert.equal(a.capacity, 64);
    view.recordScrape(a, gauges(2, 60));
    assert.equal(a.capacity, 64);
  });

  it("starts an engine that appears after the fleet's safe-start record was read from that record (a replica joining a warm fleet)", () => {
    const view = new LoadView({ ...SETTINGS, safeStart: { enabled: true, initialLimit: 4, queueBudget: 1, ttfbTolerance: 2 } }, () => 1_000_000);
    // Read at start-up, before discovery produced the engines: two warm replicas hold 120 of e1 between them.
    view.fleetSafeStart(new Map([['e1', { limits: 120, replicas: 2, learnedCapacity: undefined }]]));
    view.update({ version: 1, endpoints: [endpoint('e1', ['m']), endpoint('e2', ['m'])] });
    const [e1, e2] = [...view.all()];
    assert.equal(e1?.concurrencyLimit, 40, 'a third of the fleet record, as if split over the two and this one');
    assert.equal(e1?.safeStart?.status.reason, 'fleet-share');
    assert.equal(e2?.concurrencyLimit, 4, 'an engine the fleet holds no record of starts at the first limit');
  });

  it("tells its listener when the fleet's record raised a limit, so requests queued for room go at once", () => {
    const view = new LoadView({ ...SETTINGS, safeStart: { enabled: true, initialLimit: 4, queueBudget: 1, ttfbTolerance: 2 } }, () => 1_000_000);
    view.update({ version: 1, endpoints: [endpoint('e1', ['m'])] });
    let raised = 0;
    view.onRoomOpened = () => raised++;
    view.fleetSafeStart(new Map([['e1', { limits: 6, replicas: 2, learnedCapacity: undefined }]]));
    assert.equal(raised, 0, 'a share below its own limit (6 / 3 = 2) raises nothing');
    view.fleetSafeStart(new Map([['e1', { limits: 90, replicas: 2, learnedCapacity: undefined }]]));
    assert.deepEqual([raised, [...view.all()][0]?.concurrencyLimit], [1, 30]);
  });

  it('tells its listener when a fleet read shows the other replicas finished requests, so requests queued here take the room (fleet mirrored in bursts)', () => {
    const always = new LoadView(SETTINGS);
    always.update({ version: 1, endpoints: [endpoint('e1', ['m'], { capacity: 4 })] });
    always.onRoomOpened = () => assert.fail('under a configured bound a fleet read wakes nothing');
    always.fleetInFlight(new Map([['e1', 3]]), 2);
    always.fleetInFlight(new Map([['e1', 1]]), 2);
    const view = new LoadView({ ...SETTINGS, fleetMirroring: 'burst' });
    view.update({ version: 1, endpoints: [endpoint('e1', ['m'], { capacity: 4 }), endpoint('e2', ['m'], { capacity: 4 })] });
    let opened = 0;
    view.onRoomOpened = () => opened++;
    view.fleetInFlight(new Map([['e1', 3], ['e2', 1]]), 2);
    view.fleetInFlight(new Map([['e1', 3], ['e2', 1]]), 2);
    assert.equal(opened, 0, 'the others opened requests, then nothing changed: no room');
    view.fleetInFlight(new Map([['e1', 2], ['e2', 2]]), 2);
    assert.equal(opened, 1, 'one finished at e1 (another opened at e2)');
    view.fleetInFlight(new Map([['e2', 2]]), 2);
    assert.equal(opened, 2, 'a read that no longer names e1: the others hold none there');
  });

  it('prefers configured capacity', () => {
    const view = new LoadView(SETTINGS);
    view.update({ version: 1, endpoints: [endpoint('a', ['m'], { capacity: 8 })] });
    const a = [...view.all()][0]!;
    view.recordScrape(a, gauges(2, 12));
    assert.equal(a.capacity, 8);
  });

  it('ejects after consecutive failures, for longer each time, never more than the max share', () => {
    const { clock, view, states } = fixture(4);
    const [a, b, c] = states as [NonNullable<(typeof states)[0]>, NonNullable<(typeof states)[0]>, NonNullable<(typeof states)[0]>];
    const fail = (s: typeof a, kind: 'connect' | 'status_5xx' | 'midstream' = 'connect') => view.settle(s, view.begin(s), kind);
    fail(a);
    fail(a);
    view.tick();
    assert.equal(a.ejected, false);
    fail(a);
    view.tick();
    assert.equal(a.ejected, true);
    assert.equal(a.ejectedUntil, clock.now + 10_000);
    // Mid-stream cuts never count.
    for (let i = 0; i < 5; i++) fail(c, 'midstream');
    view.tick();
    assert.equal(c.ejected, false);
    // A second endpoint may be ejected (2 of 4 = 50%), a third may not.
    for (let i = 0; i < 3; i++) fail(b, 'status_5xx');
    for (let i = 0; i < 3; i++) fail(c);
    view.tick();
    assert.equal(b.ejected, true);
    assert.equal(c.ejected, false, 'max share of ejected endpoints');
    // Back after the interval on probation: one failure ejects again, for twice as long.
    clock.now += 10_001;
    view.tick();
    assert.equal(a.ejected, false);
    fail(a);
    view.tick();
    assert.equal(a.ejected, true);
    assert.equal(a.ejectedUntil, clock.now + 20_000);
    // A success after the interval readmits fully.
    clock.now += 20_001;
    view.settle(a, view.begin(a));
    fail(a);
    view.tick();
    assert.equal(a.ejected, false);
  });

  it('tracks the error rate as a moving average', () => {
    const { view, states } = fixture(1);
    const a = states[0]!;
    for (let i = 0; i < 50; i++) view.settle(a, view.begin(a), 'midstream');
    assert.ok(a.errorRate > 0.99);
    for (let i = 0; i < 50; i++) view.settle(a, view.begin(a));
    assert.ok(a.errorRate < 0.01);
  });
});

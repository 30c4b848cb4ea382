import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BURST_RISE } from './derived-load.ts';
import { EndpointState } from './endpoint-state.ts';
import type { LoadClockAndSettings } from './load-clock.ts';

const clock = (): LoadClockAndSettings & { now: number } => ({
  now: 1_000_000,
  maxScrapeAgeMs: 3_000,
  defaultCapacity: 10,
  ejection: { consecutiveFailures: 2, baseMs: 10_000, maxMs: 60_000, maxShare: 0.5 },
});
const endpoint = { id: 'e0', url: 'http://127.0.0.1:9/', models: ['m'], labels: {}, ready: true, draining: false };
const noneEjected = { size: 1, ejectedCount: () => 0 };

describe('the derived-load memo sees a change in every part it reads, within one clock tick', () => {
  it('recomputes when the source changes the configured capacity', () => {
    const view = clock();
    const state = new EndpointState(endpoint, view);
    state.begin();
    state.begin();
    assert.equal(state.loadScore, 0.2, 'two open over the default capacity of ten');
    state.describe({ ...endpoint, capacity: 4 });
    assert.equal(state.loadScore, 0.5);
    assert.equal(state.queuedBySend, 0);
  });

  it('recomputes when the fleet counts move, and when they are forgotten', () => {
    const view = clock();
    const state = new EndpointState({ ...endpoint, capacity: 4 }, view);
    state.begin();
    assert.equal(state.loadScore, 0.25);
    state.fleetInFlight(3, 1);
    assert.deepEqual([state.loadScore, state.queuedBySend], [1, 2], 'full: the one other replica mirrors the send');
    state.forgetFleet();
    assert.deepEqual([state.loadScore, state.queuedBySend], [0.25, 0]);
  });

  it('takes the other replicas to change as this one does between fleet reads', () => {
    const view = clock();
    const state = new EndpointState({ ...endpoint, capacity: 20 }, view);
    state.fleetInFlight(2, 2);
    assert.equal(state.loadScore, 0.1, 'the others hold 2');
    const tokens = [state.begin(), state.begin(), state.begin()];
    assert.equal(state.loadScore, (3 + 2 + 2 * 3) / 20, 'this replica sent 3 since the read: each of the 2 others is taken to have sent 3 too');
    state.fleetInFlight(4, 2);
    assert.equal(state.loadScore, (3 + 2 + 2 * 3) / 20, 'the next read holds counts published up to an interval before it: the others are still taken to have sent as many as this replica since the read before (2 + 2 × 3 > 4)');
    state.fleetInFlight(4, 2);
    assert.equal(state.loadScore, (3 + 4) / 20, 'a read with nothing sent here since the one before replaces the guess with what they published');
    for (const token of tokens) state.settle(token, view.now, undefined, noneEjected);
    assert.equal(state.loadScore, 0, 'and requests finishing here are taken to finish there too (never below nothing)');
  });

  it('with mirroring in bursts only, takes the others to send as this replica does once it opened BURST_RISE since the read', () => {
    const view = { ...clock(), fleetMirroring: 'burst' as const };
    const state = new EndpointState({ ...endpoint, capacity: 8 }, view);
    state.fleetInFlight(6, 2);
    const first = state.begin();
    assert.deepEqual([state.loadScore, state.queuedBySend], [7 / 8, 0], 'one sent since the read: steady, the others send on their own and the last slot is free');
    for (let sent = 1; sent < BURST_RISE; sent++) state.begin();
    assert.deepEqual([state.loadScore, state.queuedBySend], [(BURST_RISE * 3 + 6) / 8, 3], `${BURST_RISE} opened since the read: a burst, each other replica is taken to have opened as many and to mirror the next send`);
    state.settle(first, view.now, undefined, noneEjected);
    assert.deepEqual([state.loadScore, state.queuedBySend], [(BURST_RISE - 1 + 6) / 8, 0], 'one finished: steady again');
  });

  it('recomputes when a scrape arrives, when a request settles, and when the scrape goes stale', () => {
    const view = clock();
    const state = new EndpointState({ ...endpoint, capacity: 4 }, view);
    const token = state.begin();
    state.markScrapeStart(view.now + 100);
    state.recordScrape(new Map([['m', { waiting: 2, running: 4, kvCacheUsage: 0.9 }]]), view.now);
    assert.deepEqual([state.estimatedWaiting, state.kvCacheUsage], [2, 0.9]);
    state.settle(token, view.now, undefined, noneEjected);
    assert.equal(state.estimatedWaiting, 1, 'the settled request held a slot the scrape counted');
    view.now += 3_001;
    assert.deepEqual([state.estimatedWaiting, state.loadScore, state.kvCacheUsage], [0, 0, 0], 'stale: in-flight counts alone');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndpointState } from './endpoint-state.ts';
import type { LoadClockAndSettings } from './load-clock.ts';

const clock = (): LoadClockAndSettings & { now: number } => ({
  now: 1_000_000,
  maxScrapeAgeMs: 3_000,
  defaultCapacity: 256,
  ejection: { consecutiveFailures: 2, baseMs: 10_000, maxMs: 60_000, maxShare: 0.5 },
});
const endpoint = { id: 'e0', url: 'http://127.0.0.1:9/v1/', models: ['m'], labels: {}, ready: true, draining: false };

/** A set of `size` endpoints with `ejected` of them ejected, counting how often it is asked. */
function census(size: number, ejected = 0) {
  return {
    size,
    asked: 0,
    ejectedCount(): number {
      this.asked++;
      return ejected;
    },
  };
}

describe('endpoint state owns its bookkeeping', () => {
  it('lets readers read every field and write none', () => {
    const state = new EndpointState(endpoint, clock());
    assert.equal(state.basePath, '/v1');
    // @ts-expect-error in-flight is the state's to count
    assert.throws(() => (state.inFlight = 5), TypeError);
    const fields = ['endpoint', 'origin', 'basePath', 'idHash', 'present', 'inFlight', 'scraped', 'sentSinceScrape', 'doneSinceScrape', 'learnedCapacity', 'errorRate', 'consecutiveFailures', 'lastFailureAt', 'lastFailureKind', 'ejectedUntil', 'ejections', 'lastEjectedAt', 'safeStart'] as const;
    for (const field of fields) {
      const before = state[field];
      assert.throws(() => Reflect.set(state, field, 1) || assert.fail('refused silently'), `${field} is not writable`);
      assert.equal(state[field], before, field);
    }
  });

  it('moves in-flight, the scrape counts and derived load together', () => {
    const view = clock();
    const state = new EndpointState(endpoint, view);
    state.markScrapeStart(view.now);
    state.recordScrape(new Map([['m', { waiting: 0, running: 4, kvCacheUsage: 0.5 }]]), view.now);
    const before = state.loadScore;
    const token = state.begin();
    assert.deepEqual([state.inFlight, state.sentSinceScrape], [1, 1]);
    assert.ok(state.loadScore > before, 'the memo of derived values saw the send');
    assert.equal(state.settle(token, view.now, undefined, census(1)), false);
    assert.deepEqual([state.inFlight, state.sentSinceScrape, state.loadScore], [0, 0, before]);
  });

  it('drains its open requests over the mean answer time while it has not yet finished that many', () => {
    const view = clock();
    const state = new EndpointState({ ...endpoint, capacity: 64 }, view);
    assert.equal(state.drainRate(view.now), 0, 'nothing known');
    state.settle(state.begin(), view.now, undefined, census(1), 100);
    view.now += 1_000;
    assert.equal(state.drainRate(view.now), 0.5, 'nothing open: what it finished lately (one in its first second, smoothed)');
    const open = Array.from({ length: 32 }, () => state.begin());
    assert.equal(state.drainRate(view.now), 320, '32 open, 100 ms each');
    for (const token of open) state.settle(token, view.now, undefined, census(1));
    assert.equal(state.queueAllowance, 1, '64 slots, 100 ms each: what it drains in the 2 ms a refill takes');
  });

  it("drains at least its even share of a full engine's rate when the replica count is known", () => {
    const view = { ...clock(), replicas: { value: 4 } };
    const state = new EndpointState({ ...endpoint, capacity: 8 }, view);
    state.settle(state.begin(), view.now, undefined, census(1), 250);
    view.now += 1_000;
    assert.equal(state.drainRate(view.now), 8, '8 slots of 250 ms drain 32 a second, a quarter of it this replica\'s (it finished only one)');
    state.fleetInFlight(0, 1);
    assert.equal(state.drainRate(view.now), 16, 'the shared state names one other live replica: half');
    const unknown = new EndpointState({ ...endpoint, capacity: 8 }, clock());
    unknown.settle(unknown.begin(), view.now, undefined, census(1), 250);
    assert.equal(unknown.drainRate(view.now + 1_000), 0.5, 'replica count unknown: only what it finished');
  });

  it('asks the set how many endpoints are ejected only when a failure could eject one more', () => {
    const view = clock();
    const state = new EndpointState(endpoint, view);
    const fleet = census(4, 2);
    assert.equal(state.settle(state.begin(), view.now, 'connect', fleet), false);
    assert.equal(state.settle(state.begin(), view.now, 'midstream', fleet), false);
    assert.equal(fleet.asked, 0, 'one connect failure is below the threshold; a mid-stream cut never ejects');
    assert.equal(state.settle(state.begin(), view.now, undefined, fleet), false);
    assert.equal(state.consecutiveFailures, 0, 'a success clears the streak');
    assert.equal(state.settle(state.begin(), view.now, 'connect', fleet), false);
    assert.equal(state.settle(state.begin(), view.now, 'connect', fleet), false, 'two of four ejected already: the max share');
    assert.equal(fleet.asked, 1);
    assert.equal(state.settle(state.begin(), view.now, 'connect', census(4, 1)), true);
    assert.deepEqual([state.ejectedUntil, state.ejections, state.lastEjectedAt], [view.now + 10_000, 1, view.now]);
    assert.equal(state.consecutiveFailures, 1, 'on probation: the next failure ejects again');
    assert.equal(state.ejected, true);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kvUsageScorer } from '../scorers/kv-usage.ts';
import { loadScoreScorer } from '../scorers/load-score.ts';
import { SessionRendezvousScorer } from '../scorers/session-rendezvous.ts';
import { BoundedWalkPicker } from '../pickers/bounded-walk.ts';
import { WeightedMaxPicker } from '../pickers/weighted-max.ts';
import type { FleetShare } from '../../load/reported-load.ts';
import { evenShare, homeRoom, homeWaitMs, isSaturated } from '../saturation.ts';
import { SchedulingProfile } from './profile.ts';
import { ep, facts, seeded, type FakeCandidate } from '../../../tests/kit/scheduling-fixtures.ts';

const profile = new SchedulingProfile('auto', [
  new BoundedWalkPicker(new SessionRendezvousScorer(), { epsilon: 0.25, kappa: 0, floor: 0.5 }),
  new WeightedMaxPicker([{ scorer: loadScoreScorer, weight: 1 }, { scorer: kvUsageScorer, weight: 0.001 }], seeded(3)),
]);
const saturated = (c: FakeCandidate) => c.estimatedWaiting > 4;
const sat = (id: string) => ep(id, 0, { estimatedWaiting: 9 });
const ids = (attempts: readonly FakeCandidate[]) => attempts.map((c) => c.id);

describe('scheduling profile', () => {
  it('admits to a candidate that is not saturated, with the next one as the retry target', () => {
    const schedule = profile.schedule(facts(), [sat('s1'), ep('a', 0.1), sat('s2'), ep('b', 0.2)], saturated);
    assert.equal(schedule.kind, 'admit');
    if (schedule.kind === 'admit') assert.deepEqual(ids(schedule.attempts), ['a', 'b']);
  });
  it('falls back to a saturated endpoint as the retry target rather than none', () => {
    const schedule = profile.schedule(facts(), [sat('s1'), ep('a')], saturated);
    assert.ok(schedule.kind === 'admit');
    assert.deepEqual(ids(schedule.attempts), ['a', 's1']);
    const alone = profile.schedule(facts(), [ep('a')], saturated);
    assert.ok(alone.kind === 'admit');
    assert.deepEqual(ids(alone.attempts), ['a']);
  });
  it('reports saturation when every candidate is saturated, and rejects with 503 when there is none', () => {
    const schedule = profile.schedule(facts(), [sat('s1'), sat('s2')], saturated);
    assert.equal(schedule.kind, 'saturated');
    if (schedule.kind === 'saturated') assert.deepEqual(ids(schedule.candidates), ['s1', 's2']);
    const none = profile.schedule(facts(), [], saturated);
    assert.ok(none.kind === 'reject');
    assert.equal(none.error.status, 503);
    assert.ok((none.error.retryAfterSeconds ?? 0) >= 1);
  });
  it('counts a keyless decision under the walk fallback, a keyed one under the walk', () => {
    const pods = [ep('a'), ep('b'), ep('c')];
    const keyless = profile.schedule(facts(), pods, saturated);
    assert.ok(keyless.kind === 'admit' && keyless.outcome === 'no_key_fallback');
    const keyed = profile.schedule(facts({ sessionKey: 'k' }), pods, saturated);
    assert.ok(keyed.kind === 'admit' && keyed.outcome === 'affinity_hit');
  });
  it('walks past a saturated home to the next in rendezvous order', () => {
    const pods = [ep('a'), ep('b'), ep('c'), ep('d')];
    const home = profile.schedule(facts({ sessionKey: 'k' }), pods, saturated);
    assert.ok(home.kind === 'admit');
    const homeId = home.attempts[0]?.id;
    const busy = pods.map((p) => (p.id === homeId ? sat(p.id) : p));
    const moved = profile.schedule(facts({ sessionKey: 'k' }), busy, saturated);
    assert.ok(moved.kind === 'admit');
    assert.notEqual(moved.attempts[0]?.id, homeId);
    assert.equal(moved.outcome, 'affinity_spill');
  });
  it('sends a pinned request only to its engine, and queues it when that engine is saturated', () => {
    const pinned = profile.schedule(facts({ pinnedEndpoint: 'c' }), [ep('a'), ep('b'), ep('c', 3)], saturated);
    assert.ok(pinned.kind === 'admit');
    assert.deepEqual(ids(pinned.attempts), ['c']);
    assert.equal(pinned.outcome, 'pinned');
    assert.equal(profile.schedule(facts({ pinnedEndpoint: 'c' }), [ep('a'), sat('c')], saturated).kind, 'saturated');
  });
  it('never picks an ejected endpoint while another is routable', () => {
    const schedule = profile.schedule(facts(), [ep('x', 0, { ejected: true }), ep('y', 5)], saturated);
    assert.ok(schedule.kind === 'admit');
    assert.deepEqual(ids(schedule.attempts), ['y']);
  });

  it('places a session that will be stored by load alone, and keeps an assigned one without a load bound', () => {
    // Forty keys: for about half, the rendezvous walk would take the busier engine (it is under the load bound).
    const candidates = [ep('busy', 0.3), ep('idle', 0.1)];
    for (let i = 0; i < 40; i++) {
      const placed = profile.schedule(facts({ sessionKey: `k${i}`, placeSession: true }), candidates, saturated);
      assert.ok(placed.kind === 'admit');
      assert.deepEqual([ids(placed.attempts)[0], placed.outcome], ['idle', 'placed']);
    }
    const kept = profile.schedule(facts({ sessionKey: 'k', assignedEndpoint: 'busy' }), [ep('busy', 5), ep('idle', 0)], saturated);
    assert.ok(kept.kind === 'admit');
    assert.deepEqual([ids(kept.attempts), kept.outcome, kept.moved], [['busy', 'idle'], 'assigned', undefined]);
    const moved = profile.schedule(facts({ sessionKey: 'k', assignedEndpoint: 'busy' }), [sat('busy'), ep('idle', 0)], saturated);
    assert.ok(moved.kind === 'admit');
    assert.deepEqual([ids(moved.attempts)[0], moved.moved], ['idle', 'saturated']);
  });

  describe('a request on its own engine (the safe start limits new work, not affinity)', () => {
    // The scheduler's two tests: saturation for new work, and what a request's own engine can do for it.
    const thresholds = { maxWaiting: 4, kvCacheThreshold: 0.9, maxInFlightPerEndpoint: 0 };
    const limited = (c: FakeCandidate) => isSaturated(c, thresholds);
    const room = (c: FakeCandidate) => homeRoom(c, thresholds);
    const atLimit = (id: string) => ep(id, 0.01, { inFlight: 4, concurrencyLimit: 4, burstBound: 5 });
    const atBound = (id: string) => ep(id, 0.01, { inFlight: 5, concurrencyLimit: 4, burstBound: 5 });
    const homeOf = (key: string, pods: readonly FakeCandidate[]) => {
      const schedule = profile.schedule(facts({ sessionKey: key }), pods, saturated);
      assert.equal(schedule.kind, 'admit');
      return schedule.kind === 'admit' ? (schedule.attempts[0] as FakeCandidate).id : '';
    };

    it('keeps a session on its engine at the safe-start limit, below its burst bound', () => {
      const home = homeOf('k', [ep('a'), ep('b'), ep('c')]);
      const pods = ['a', 'b', 'c'].map((id) => (id === home ? atLimit(id) : ep(id)));
      const schedule = profile.schedule(facts({ sessionKey: 'k' }), pods, limited, room);
      assert.equal(schedule.kind, 'admit');
      if (schedule.kind === 'admit') assert.deepEqual([ids(schedule.attempts)[0], schedule.outcome], [home, 'affinity_hit']);
      // New work (no key) is not sent there.
      const keyless = profile.schedule(facts(), pods, limited, room);
      if (keyless.kind === 'admit') assert.notEqual(ids(keyless.attempts)[0], home);
    });

    it('waits for its engine at the burst bound instead of moving, and moves only off an engine that fails a filter', () => {
      const home = homeOf('k', [ep('a'), ep('b'), ep('c')]);
      const waiting = profile.schedule(facts({ sessionKey: 'k' }), ['a', 'b', 'c'].map((id) => (id === home ? atBound(id) : ep(id))), limited, room);
      assert.equal(waiting.kind, 'saturated');
      if (waiting.kind === 'saturated') assert.equal(waiting.waitsFor?.id, home);
      const moved = profile.schedule(facts({ sessionKey: 'k' }), ['a', 'b', 'c'].map((id) => (id === home ? sat(id) : ep(id))), limited, room);
      assert.equal(moved.kind, 'admit');
      if (moved.kind === 'admit') assert.notEqual(ids(moved.attempts)[0], home);
    });

    it('waits for its engine when the batch is merely full (no queue shows), and moves once a queue shows', () => {
      // The adaptive default: no queue allowance, so a full batch fails the filter for new work.
      const adaptive = { kvCacheThreshold: 0.9, maxInFlightPerEndpoint: 0 };
      const full = (id: string, extra: Partial<FakeCandidate> = {}) => ep(id, 0.01, { inFlight: 8, queuedBySend: 1, firstByteMs: 40, ...extra });
      const home = homeOf('k', [ep('a'), ep('b'), ep('c')]);
      const pods = (engine: FakeCandidate) => ['a', 'b', 'c'].map((id) => (id === home ? engine : ep(id)));
      const newWork = (c: FakeCandidate) => isSaturated(c, adaptive);
      const ownRoom = (c: FakeCandidate) => homeRoom(c, adaptive);
      assert.equal(newWork(full(home)), true, 'a full engine takes no new work');
      const waits = profile.schedule(facts({ sessionKey: 'k' }), pods(full(home)), newWork, ownRoom);
      assert.equal(waits.kind === 'saturated' ? waits.waitsFor?.id : waits.kind, home);
      for (const failing of [full(home, { estimatedWaiting: 1 }), full(home, { kvCacheUsage: 0.95 })]) {
        const moved = profile.schedule(facts({ sessionKey: 'k' }), pods(failing), newWork, ownRoom);
        assert.ok(moved.kind === 'admit' && ids(moved.attempts)[0] !== home, 'a queue or a full KV cache moves it');
      }
      // Without the router queue's wait (waited long enough), a full engine lets it go where new work goes.
      const released = profile.schedule(facts({ sessionKey: 'k', mayWaitForHome: false }), pods(full(home)), newWork, ownRoom);
      assert.ok(released.kind === 'admit' && ids(released.attempts)[0] !== home);
    });

    it('waits for a full batch about one first byte of the engine, and at the burst bound a few scrapes', () => {
      assert.equal(homeWaitMs({ queuedBySend: 1, burstBound: undefined, firstByteMs: 40 }, 750), 40);
      assert.equal(homeWaitMs({ queuedBySend: 1, burstBound: undefined, firstByteMs: 5_000 }, 750), 750, 'never beyond the cap');
      assert.equal(homeWaitMs({ queuedBySend: 1, burstBound: undefined, firstByteMs: undefined }, 750), 0, 'no first byte seen: no wait');
      assert.equal(homeWaitMs({ queuedBySend: 0, burstBound: 5, firstByteMs: 40 }, 750), 750);
      assert.equal(homeWaitMs({ queuedBySend: 1, burstBound: undefined, firstByteMs: 40, othersInFlight: 0 }, 750, 100), 40, 'no other replica holds a slot there: no fleet lag');
      assert.equal(homeWaitMs({ queuedBySend: 1, burstBound: undefined, firstByteMs: 40, othersInFlight: 3 }, 750, 100), 140, 'a slot the others free shows a fleet read later');
    });

    it('holds new work to its even share of a full engine while another replica queues for it, and keeps a session there', () => {
      // Capacity 9 and a bound of 4 waiting: 13 shared by 3 replicas while another one has requests queued.
      const shared = (inFlight: number, fleetShare: FleetShare | undefined) => ep('a', 0.01, { inFlight, capacity: 9, fleetShare, queueAllowance: 11 });
      const seats = [0, 1, 2].map((seat) => ({ replicas: 3, seat }));
      assert.deepEqual(seats.map((seat) => [4, 5].map((n) => limited(shared(n, seat)))), [[false, true], [true, true], [true, true]], 'shares of 13: 5 for the first seat, 4 for the others');
      assert.equal(seats.map((seat) => evenShare(13, seat)).reduce((a, b) => a + b), 13, 'the shares add up to the bound');
      assert.equal(evenShare(2, { replicas: 3, seat: 2 }), 1, 'never below one');
      assert.equal(limited(shared(5, undefined)), false, 'nobody else waits: the room is its to fill');
      assert.equal(limited({ ...shared(5, seats[2]), capacity: undefined }), false, 'no share without a known capacity');
      assert.deepEqual([9, 10].map((n) => isSaturated(shared(n, { replicas: 2, seat: 1 }), { ...thresholds, maxWaiting: undefined })), [false, true], 'the queue allowance stands in for an unset maxWaiting: (9 + 11) / 2');
      assert.equal(room(shared(5, seats[2])), 'keep', 'a request that belongs there keeps it');
    });

    it('does the same for a shared assignment and a pinned response', () => {
      const assigned = profile.schedule(facts({ sessionKey: 'k', assignedEndpoint: 'a' }), [atLimit('a'), ep('b')], limited, room);
      assert.equal(assigned.kind === 'admit' ? assigned.outcome : assigned.kind, 'assigned');
      const assignedWaits = profile.schedule(facts({ sessionKey: 'k', assignedEndpoint: 'a' }), [atBound('a'), ep('b')], limited, room);
      assert.equal(assignedWaits.kind === 'saturated' ? assignedWaits.waitsFor?.id : assignedWaits.kind, 'a');
      const pinned = profile.schedule(facts({ pinnedEndpoint: 'a' }), [atLimit('a'), ep('b')], limited, room);
      assert.deepEqual(pinned.kind === 'admit' ? [ids(pinned.attempts), pinned.outcome] : pinned.kind, [['a'], 'pinned']);
      const pinnedWaits = profile.schedule(facts({ pinnedEndpoint: 'a' }), [atBound('a'), ep('b')], limited, room);
      assert.equal(pinnedWaits.kind === 'saturated' ? pinnedWaits.waitsFor?.id : pinnedWaits.kind, 'a');
    });
  });
});

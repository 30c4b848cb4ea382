import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestFacts } from '../scheduling/candidate.ts';
import type { Schedule } from '../scheduling/profiles/profile.ts';
import { AdmissionControl, type ShedReason } from './admission-control.ts';
import { WaitQueue } from './wait-queue.ts';

interface Engine {
  readonly id: string;
  readonly estimatedWaiting: number;
  readonly queueAllowance: number;
  readonly capacity: number | undefined;
  drainRate(): number;
}

/** Two saturated engines of known capacity finishing 5 requests a second each. */
const engines: Engine[] = [0, 1].map((i) => ({ id: `e${i}`, estimatedWaiting: 3, queueAllowance: 0, capacity: 4, drainRate: () => 5 }));
const facts: RequestFacts = { model: 'm', stream: false, sessionKey: undefined, bodyBytes: 10 };

function admission(queue: WaitQueue<Engine>, shed: ShedReason[], candidates: readonly Engine[] = engines): AdmissionControl<Engine> {
  return new AdmissionControl<Engine>({
    decide: (): Schedule<Engine> => ({ kind: 'saturated', candidates }),
    servingModel: () => candidates,
    queue,
    limits: { maxInFlight: 1_000, maxConnections: 1_000, eventLoopLagMs: 1_000 },
    gauges: () => ({ inFlight: 0, connections: 0, lagMs: 0 }),
    maxWaiting: undefined,
    homeWaitMs: () => 1_000,
    observer: { shed: (reason) => shed.push(reason), queued: () => undefined, waited: () => undefined },
    now: () => 0,
  });
}

/** Admission over one engine that holds a session's requests at its burst bound: they may wait for it, or go to `elsewhere`. */
function homeAdmission(queue: WaitQueue<Engine>, homeWaitMs: number): { control: AdmissionControl<Engine>; decided: RequestFacts[] } {
  const [home, elsewhere] = engines as [Engine, Engine];
  const decided: RequestFacts[] = [];
  const control = new AdmissionControl<Engine>({
    decide: (asked): Schedule<Engine> => {
      decided.push(asked);
      return asked.mayWaitForHome === false ? { kind: 'admit', attempts: [elsewhere], outcome: 'affinity_spill' } : { kind: 'saturated', candidates: [home], waitsFor: home };
    },
    servingModel: () => engines,
    queue,
    limits: { maxInFlight: 1_000, maxConnections: 1_000, eventLoopLagMs: 1_000 },
    gauges: () => ({ inFlight: 0, connections: 0, lagMs: 0 }),
    maxWaiting: undefined,
    homeWaitMs: (engine) => (engine === home ? homeWaitMs : 0),
    observer: { shed: () => undefined, queued: () => undefined, waited: () => undefined },
    now: () => 0,
  });
  return { control, decided };
}

describe('a request decided at once', () => {
  it('gets its answer synchronously, not as a promise, so the caller sends it before the next request is decided', () => {
    const { control } = homeAdmission(new WaitQueue<Engine>({ maxLength: 0, maxWaitMs: 1_000 }), 1_000);
    const admitted = control.admit({ ...facts, sessionKey: 'k' }, 'normal', new AbortController().signal);
    assert.ok(!(admitted instanceof Promise), 'admitted: a value');
    const shed = admission(new WaitQueue<Engine>({ maxLength: 0, maxWaitMs: 1_000 }), []).admit(facts, 'normal', new AbortController().signal);
    assert.ok(!(shed instanceof Promise), 'shed: a value');
    assert.equal(shed.kind, 'reject');
  });
});

describe('a request waiting for its own engine', () => {
  it('goes where new work goes at once when there is no router queue, instead of a 429', async () => {
    const { control, decided } = homeAdmission(new WaitQueue<Engine>({ maxLength: 0, maxWaitMs: 1_000 }), 1_000);
    const result = await control.admit({ ...facts, sessionKey: 'k' }, 'normal', new AbortController().signal);
    assert.deepEqual(result.kind === 'admit' ? result.attempts.map((e) => e.id) : result.kind, ['e1']);
    assert.deepEqual(decided.map((f) => f.mayWaitForHome), [undefined, false]);
  });

  it('waits in the router queue for at most its engine\'s homeWaitMs, then goes where new work goes', async () => {
    const queue = new WaitQueue<Engine>({ maxLength: 100, maxWaitMs: 10_000 });
    const { control } = homeAdmission(queue, 50);
    const pending = control.admit({ ...facts, sessionKey: 'k' }, 'normal', new AbortController().signal);
    queue.notify();
    assert.equal(queue.length, 1, 'still waiting for its engine');
    await new Promise((resolve) => setTimeout(resolve, 60));
    queue.notify();
    const result = await pending;
    assert.deepEqual(result.kind === 'admit' ? result.attempts.map((e) => e.id) : result.kind, ['e1']);
  });
});

describe('admission into the router queue', () => {
  it('queues while the queue ahead drains within 80% of the deadline, and sheds beyond it at once with when it would fit', async () => {
    // 10 requests a second drain the fleet: 10 ahead wait 1 s, 80% of the deadline.
    const queue = new WaitQueue<Engine>({ maxLength: 1_000, maxWaitMs: 1_250 });
    const shed: ShedReason[] = [];
    const control = admission(queue, shed);
    const signal = new AbortController().signal;
    const queued = Array.from({ length: 10 }, () => control.admit(facts, 'normal', signal));
    assert.equal(queue.length, 10, 'a burst that drains within the deadline waits whole');
    const over = await control.admit(facts, 'normal', signal);
    assert.equal(over.kind, 'reject');
    if (over.kind === 'reject') {
      assert.equal(over.error.status, 429);
      assert.equal(over.error.retryAfterSeconds, 1, '11 ahead of 10 per second: 0.1 s past the deadline, rounded up');
    }
    assert.deepEqual(shed, ['queue_full']);
    // High priority queues ahead of normal work, so normal waiters do not count against it.
    const high = control.admit(facts, 'high', signal);
    assert.equal(queue.length, 11);
    const results = await Promise.all([...queued, high]);
    assert.ok(results.every((r) => r.kind === 'reject' && r.error.code === 'SWITCHYARD_QUEUE_TIMEOUT'), 'still saturated at the deadline');
  });

  it("gates a request waiting for its own engine on the fleet's drain, not its engine's alone (regression: a session's request behind a long queue was shed as queue_full)", async () => {
    // 10 ahead; the home engine alone drains 5 a second (2 s: past 80% of 1.25 s), the fleet 10 (1 s: within).
    const queue = new WaitQueue<Engine>({ maxLength: 1_000, maxWaitMs: 1_250 });
    const shed: ShedReason[] = [];
    const filler = admission(queue, shed);
    const signal = new AbortController().signal;
    const ahead = Array.from({ length: 9 }, () => filler.admit(facts, 'normal', signal));
    const [home] = engines as [Engine, Engine];
    let decisions = 0;
    const sessions = new AdmissionControl<Engine>({
      decide: (): Schedule<Engine> => {
        decisions++;
        return { kind: 'saturated', candidates: [home], waitsFor: home };
      },
      servingModel: () => engines,
      queue,
      limits: { maxInFlight: 1_000, maxConnections: 1_000, eventLoopLagMs: 1_000 },
      gauges: () => ({ inFlight: 0, connections: 0, lagMs: 0 }),
      maxWaiting: undefined,
      homeWaitMs: () => 100,
      observer: { shed: (reason) => shed.push(reason), queued: () => undefined, waited: () => undefined },
      now: () => 0,
    });
    const session = sessions.admit({ ...facts, sessionKey: 'k' }, 'normal', signal);
    assert.equal(queue.length, 10, 'queued behind the nine');
    assert.deepEqual(shed, []);
    assert.equal(decisions, 1, 'the gate reads the fleet, it does not decide again (a decision counts itself and records LoRA adapters as sent)');
    const results = await Promise.all([...ahead, session]);
    assert.ok(results.every((r) => r.kind === 'reject' && r.error.code === 'SWITCHYARD_QUEUE_TIMEOUT'), 'still saturated at the deadline');
  });

  for (const [why, cold] of [
    ['nothing finished lately', engines.map((e) => ({ ...e, drainRate: () => 0 }))],
    ["an engine's capacity is still unknown (the safe start holds its rate down)", engines.map((e, i) => ({ ...e, capacity: i === 0 ? undefined : e.capacity }))],
  ] as const) {
  it(`without a rate that says what the fleet drains (${why}), queues up to the length and lets the deadline decide`, async () => {
    const queue = new WaitQueue<Engine>({ maxLength: 3, maxWaitMs: 50 });
    const shed: ShedReason[] = [];
    const control = admission(queue, shed, cold);
    const signal = new AbortController().signal;
    await Promise.all(Array.from({ length: 4 }, () => Promise.resolve(control.admit(facts, 'normal', signal))));
    assert.deepEqual(shed.sort(), ['queue_full', 'queue_timeout', 'queue_timeout', 'queue_timeout']);
  });
  }
});

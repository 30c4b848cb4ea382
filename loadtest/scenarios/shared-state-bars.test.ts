import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Measurement } from './measure.ts';
import { checkBars, convergenceText, serverFailures, wiringProblem, type SharedStateRuns } from './shared-state-bars.ts';
import type { SharedStateWiring } from './shared-state-rig.ts';
import type { RunResult } from './shared-state-run.ts';
import type { CalmRun } from './shared-state-session-runs.ts';

function run(replicas: number, redis: boolean, wiring: SharedStateWiring): RunResult<undefined> {
  const measurement = { run: { measured: 1000, ok: 1000, shed: 0, failed: 0, failureKinds: {}, windowMs: 10_000 }, ttft: { p50: 40, p99: 80 }, e2e: { p50: 200, p99: 260 } } as unknown as Measurement;
  return {
    label: 'test',
    replicas,
    redis,
    wiring,
    formedInMs: undefined,
    measurement,
    queues: { imbalance: 1, samples: 10, samplesWithQueue: 0, maxWaiting: [0, 0, 0, 0], meanWaiting: [0, 0, 0, 0] },
    waitingImbalance: 1,
    requests: 1000,
    cpuMsPerRequest: 1,
    commands: undefined,
    commandsPerRequest: Number.NaN,
    roundTripsByCommand: {},
    roundTripsPerRequest: Number.NaN,
    movesByReason: {},
    moves: undefined,
    fleetLoadAgeS: undefined,
    sessions: [],
    during: undefined,
  };
}

function calm(replicas: number, redis: boolean, wiring: SharedStateWiring, share: number): CalmRun {
  return { run: run(replicas, redis, wiring), stickiness: { conversations: 400, onOneEngine: Math.round(400 * share), share, changedEngine: 400 - Math.round(400 * share), minMoves: 0 }, join: undefined } as unknown as CalmRun;
}

const bar = (runs: SharedStateRuns, prefix: string) => checkBars(runs).list.find((b) => b.name.startsWith(prefix));

describe('wiringProblem', () => {
  it('names routers that ignore Redis, and a fleet that never formed', () => {
    assert.match(wiringProblem([run(3, true, 'absent')]) ?? '', /no switchyard_shared_state_up/);
    assert.match(wiringProblem([run(3, true, 'unformed')]) ?? '', /never all reported/);
    assert.equal(wiringProblem([run(3, true, 'formed'), run(3, false, 'off')]), undefined);
  });
});

describe('serverFailures', () => {
  it('counts 5xx, resets and broken streams, not 4xx answers', () => {
    assert.equal(serverFailures({ 'status 502': 2, reset: 1, corrupt: 1, 'status 401': 7, timeout: 1 }), 5);
  });
});

describe('convergenceText', () => {
  it('says when the fleet agreed, when it settled, and when it never did', () => {
    assert.equal(convergenceText({ firstMs: 400, settledMs: 400 }), '400 ms');
    assert.equal(convergenceText({ firstMs: 400, settledMs: 1500 }), 'first 400 ms, settled 1500 ms');
    assert.equal(convergenceText({ firstMs: 400, settledMs: undefined }), 'agreed after 400 ms, fell apart again and never settled');
    assert.equal(convergenceText({ firstMs: undefined, settledMs: undefined }), 'never agreed');
  });
});

describe('checkBars', () => {
  const empty: SharedStateRuns = { calm: [], busy: [], leastLoad: [], quota: [] };

  it('fails stickiness on routers that ignore Redis, however sticky the run was', () => {
    const runs = { ...empty, calm: [calm(1, false, 'off', 0.7), calm(1, true, 'absent', 1)] };
    const result = bar(runs, 'one replica, Redis');
    assert.equal(result?.pass, false);
    assert.match(result?.measured ?? '', /shared state not in use/);
  });

  it('passes stickiness at the bar with the fleet formed, and shows the figure without Redis beside it', () => {
    const runs = { ...empty, calm: [calm(3, false, 'off', 0.44), calm(3, true, 'formed', 0.996)] };
    const result = bar(runs, 'three replicas, Redis');
    assert.equal(result?.pass, true);
    assert.match(result?.measured ?? '', /without Redis: 44\.0%/);
  });

  it('fails every part the plan did not run, rather than leaving it out', () => {
    const bars = checkBars(empty);
    assert.ok(bars.list.length >= 10);
    assert.ok(bars.list.every((b) => !b.pass));
  });
});

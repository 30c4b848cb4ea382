import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSaturated } from '../scheduling/saturation.ts';
import { PRIORITY_LIMITS, parsePriority } from '../scheduling/priority.ts';
import { fitToFileLimit, pressureReason } from './router-pressure.ts';
import { retryAfterSeconds } from './retry-after.ts';
import { RetryBudget } from '../proxy/retry-budget.ts';

describe('saturation', () => {
  const thresholds = { maxWaiting: 4, kvCacheThreshold: 0.9, maxInFlightPerEndpoint: 0 };
  const load = (estimatedWaiting: number, extra: Partial<{ queuedBySend: number; kvCacheUsage: number; inFlight: number; queueAllowance: number }> = {}) => ({
    estimatedWaiting,
    queuedBySend: estimatedWaiting > 0 ? 1 : 0,
    kvCacheUsage: 0.1,
    inFlight: 0,
    queueAllowance: 0,
    ...extra,
  });
  it('uses estimated waiting and KV-cache usage, not in-flight alone', () => {
    assert.equal(isSaturated(load(0, { inFlight: 500 }), thresholds), false);
    assert.equal(isSaturated(load(3), thresholds), false, 'one more makes 4 waiting: within the budget');
    assert.equal(isSaturated(load(4), thresholds), true, 'one more would make 5 waiting');
    assert.equal(isSaturated(load(0, { kvCacheUsage: 0.9 }), thresholds), true);
    assert.equal(isSaturated(load(0, { inFlight: 7 }), { ...thresholds, maxInFlightPerEndpoint: 7 }), true);
  });
  it('with maxWaiting 0, admits only into a free batch slot', () => {
    const zero = { ...thresholds, maxWaiting: 0 };
    assert.equal(isSaturated(load(0, { queuedBySend: 0 }), zero), false);
    assert.equal(isSaturated(load(0, { queuedBySend: 1 }), zero), true);
  });
  it('counts a send as often as replicas are taken to mirror it', () => {
    assert.equal(isSaturated(load(2, { queuedBySend: 3 }), thresholds), true, 'three replicas each sending one would make 5 waiting');
    assert.equal(isSaturated(load(1, { queuedBySend: 3 }), thresholds), false);
  });
  it('without a fixed maxWaiting, bounds each endpoint by its own queue allowance', () => {
    const adaptive = { ...thresholds, maxWaiting: undefined };
    assert.equal(isSaturated(load(0, { queuedBySend: 1 }), adaptive), true, 'no allowance: free batch slots only');
    assert.equal(isSaturated(load(5, { queueAllowance: 6 }), adaptive), false);
    assert.equal(isSaturated(load(6, { queueAllowance: 6 }), adaptive), true);
    assert.equal(isSaturated(load(3, { queueAllowance: 6 }), adaptive, 'low'), true, 'low priority gets half');
  });
  it('turns low priority away at half the waiting budget', () => {
    assert.equal(isSaturated(load(2), thresholds, 'low'), true);
    assert.equal(isSaturated(load(2), thresholds, 'normal'), false);
    assert.equal(isSaturated(load(2), thresholds, 'high'), false);
  });
});

describe('priority', () => {
  it('reads high, low, and anything else as normal', () => {
    assert.equal(parsePriority('HIGH'), 'high');
    assert.equal(parsePriority(' low '), 'low');
    assert.equal(parsePriority('urgent'), 'normal');
    assert.equal(parsePriority(undefined), 'normal');
    assert.equal(parsePriority(['low', 'high']), 'low');
  });
});

describe('router pressure', () => {
  const limits = { maxInFlight: 100, maxConnections: 200, eventLoopLagMs: 200 };
  it('sheds low priority first', () => {
    const gauges = { inFlight: 85, connections: 10, lagMs: 0 };
    assert.equal(pressureReason(limits, gauges, 'low'), 'in_flight_cap');
    assert.equal(pressureReason(limits, gauges, 'normal'), undefined);
    assert.equal(pressureReason(limits, { inFlight: 100, connections: 10, lagMs: 0 }, 'high'), 'in_flight_cap');
    assert.equal(pressureReason(limits, { inFlight: 0, connections: 201, lagMs: 0 }, 'normal'), 'connection_cap');
    const lag = { inFlight: 0, connections: 0, lagMs: 300 };
    assert.equal(pressureReason(limits, lag, 'normal'), 'event_loop_lag');
    assert.equal(pressureReason(limits, lag, 'high'), undefined, `high waits for ${PRIORITY_LIMITS.high.lag}x the lag threshold`);
  });
  it('fits the caps under the open-file limit', () => {
    const procLimits = 'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            256                  1024                 files     \n';
    const fitted = fitToFileLimit({ maxInFlight: 10_000, maxConnections: 20_000, eventLoopLagMs: 200 }, { readLimits: () => procLimits });
    assert.equal(fitted.openFiles, 256);
    assert.equal(fitted.limits.maxConnections, 96);
    assert.equal(fitted.limits.maxInFlight, 96);
    const roomy = fitToFileLimit(limits, { adminConnections: 64, readLimits: () => 'Max open files            unlimited            unlimited            files\n' });
    assert.deepEqual(roomy.limits, limits);
    assert.equal(roomy.adminConnections, 64);
  });
  it('reserves the admin port\'s connection cap before the traffic sides split the open-file limit', () => {
    const procLimits = (soft: number) => `Max open files            ${soft}                  ${soft}                 files     \n`;
    const wanted = { maxInFlight: 10_000, maxConnections: 20_000, eventLoopLagMs: 200 };
    const at1024 = fitToFileLimit(wanted, { adminConnections: 64, readLimits: () => procLimits(1024) });
    assert.equal(at1024.adminConnections, 64);
    assert.equal(at1024.limits.maxConnections, 448); // (1024 - 64 - 64) / 2
    assert.equal(at1024.limits.maxInFlight, 448);
    // A small limit shrinks the admin cap to an eighth of the budget, never below 8.
    const at256 = fitToFileLimit(wanted, { adminConnections: 64, readLimits: () => procLimits(256) });
    assert.equal(at256.adminConnections, 24);
    assert.equal(at256.limits.maxConnections, 84);
    assert.equal(fitToFileLimit(wanted, { adminConnections: 64, readLimits: () => procLimits(100) }).adminConnections, 8);
  });
});

describe('Retry-After', () => {
  const candidate = (estimatedWaiting: number, rate: number, queueAllowance = 0) => ({ estimatedWaiting, queueAllowance, drainRate: () => rate });
  it('divides the backlog beyond the queue budget by the drain rate, 1 s at least', () => {
    assert.equal(retryAfterSeconds([candidate(25, 2), candidate(5, 3)], 5, 0, 0), Math.ceil((21 + 1) / 5));
    assert.equal(retryAfterSeconds([candidate(5, 100)], 5, 0, 0), 1);
    assert.equal(retryAfterSeconds([candidate(5, 0)], 5, 0, 0), 2, 'no drain rate known');
    assert.equal(retryAfterSeconds([candidate(10_000, 1)], 5, 0, 0), 60, 'capped');
    assert.equal(retryAfterSeconds([candidate(25, 2, 3), candidate(5, 3, 9)], undefined, 0, 0), Math.ceil((23 + 0) / 5), "each candidate's own allowance");
  });
});

describe('retry budget', () => {
  it('allows at most the ratio of open requests, with a floor', () => {
    let active = 10;
    const budget = new RetryBudget(0.2, 3, () => active);
    assert.ok(budget.tryAcquire() && budget.tryAcquire() && budget.tryAcquire());
    assert.equal(budget.tryAcquire(), false, 'floor of 3 with 10 active');
    active = 100;
    for (let i = 0; i < 17; i++) assert.ok(budget.tryAcquire());
    assert.equal(budget.tryAcquire(), false, '20% of 100');
    budget.release();
    assert.ok(budget.tryAcquire());
  });
});

/**
 * Least-load with three router replicas at 85% load, by how often the
 * replicas publish their in-flight counts through Redis (the staleness the
 * shared fleet load leaves), against one router: the shared-state
 * benchmark's least-load runs (same engines, same rig), one configuration
 * per name, interleaved over rounds. Names: `one` (one router, Redis),
 * `nored` (three replicas without Redis), `p2c` (three replicas, Redis,
 * power of two choices), or a publish interval in ms (three replicas, Redis).
 *
 *   node loadtest/scenarios/micro/fleet-interval-bench.ts [one,100,50,25] [rounds]
 *
 * Prints each run, then the median TTFT p99 (ms), engine waiting max ÷ mean
 * and mean engine waiting per configuration.
 */
import { startSimulatedFleet, fleetCapacityPerS, measureServiceMs } from '../fleet.ts';
import { ENGINES, LATE_ENGINE, MODEL, PLANS } from '../shared-state-plan.ts';
import { LateEngine } from '../shared-state-late-engine.ts';
import { runOnce } from '../shared-state-run.ts';
import { startRedisServer } from '../../../tests/kit/redis/redis-server.ts';

const engines = await startSimulatedFleet(MODEL, ENGINES);
const redis = await startRedisServer();
const capacity = fleetCapacityPerS(ENGINES, await measureServiceMs(engines, MODEL, 3));
const rate = Math.round(capacity * 0.85);
const bench = { engines, late: await LateEngine.reserve(MODEL, LATE_ENGINE), redis, generators: 1, quiet: true };
const plan = PLANS.quick;
const configs = (process.argv[2] ?? 'one,100,50,25').split(',');
const results = new Map<string, { p99: number; imb: number; wait: number }[]>();
for (let round = 0; round < Number(process.argv[3] ?? 3); round++) {
  for (const c of configs) {
    const replicas = c === 'one' ? 1 : 3;
    const args = c === 'one' ? [] : c === 'p2c' ? ['--routing-power-of-two-choices', 'true'] : c === 'nored' ? [] : ['--redis-publish-interval-ms', c];
    const run = await runOnce<undefined>(bench, { label: c, replicas, redis: c !== 'nored', lateEngine: false, args, spec: { request: { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: 0, headers: {}, users: 0, checkIds: true }, mode: { kind: 'open', ratePerS: rate, maxConnections: 1000 }, warmupMs: plan.warmupMs, durationMs: plan.leastLoadMs, idPrefix: `x-${round}-${c}`, seed: 100 + round } });
    const list = results.get(c) ?? [];
    list.push({ p99: run.measurement.ttft.p99, imb: run.waitingImbalance, wait: run.queues.meanWaiting.reduce((a, b) => a + b, 0) / run.queues.meanWaiting.length });
    results.set(c, list);
    console.log(c, round, run.measurement.ttft.p99.toFixed(0), run.waitingImbalance.toFixed(2));
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [c, list] of results) console.log(c, 'p99', med(list.map((r) => r.p99)).toFixed(0), 'imb', med(list.map((r) => r.imb)).toFixed(2), 'wait', med(list.map((r) => r.wait)).toFixed(2));
await redis.stop();
process.exit(0);

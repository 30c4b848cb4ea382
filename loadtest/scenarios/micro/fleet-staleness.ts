/**
 * How late one replica sees another's in-flight counts through Redis: the
 * staleness the fleet load leaves (router/state/fleet-load.ts). Three
 * replicas publish and read on their own timers, as the router runs them,
 * against a real redis-server; at random moments replica A opens or closes
 * a request to one engine, and the time until B's load view shows A's new
 * count is recorded. Also prints the script's Redis round trip.
 *
 *   node loadtest/scenarios/micro/fleet-staleness.ts [--interval-ms 100] [--changes 200]
 */
import { parseArgs } from 'node:util';
import { configSchema } from '../../../router/config/schema.ts';
import { LoadView } from '../../../router/load/load-view.ts';
import { FleetLoad } from '../../../router/state/fleet-load.ts';
import { createRedisClient } from '../../../router/state/redis-client.ts';
import { SharedStore } from '../../../router/state/shared-store.ts';
import { startRedisServer } from '../../../tests/kit/redis/redis-server.ts';

const { values } = parseArgs({ options: { 'interval-ms': { type: 'string', default: '100' }, changes: { type: 'string', default: '200' } } });
const INTERVAL_MS = Number(values['interval-ms']);
const CHANGES = Number(values.changes);
const ENGINES = 8;

const redis = await startRedisServer();
const roundTrips: number[] = [];
const replicas = ['a', 'b', 'c'].map((id) => {
  const view = new LoadView({ maxScrapeAgeMs: 3_000, defaultCapacity: 16, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 1 } });
  view.update({ version: 1, endpoints: Array.from({ length: ENGINES }, (_, i) => ({ id: `engine-${i}`, url: `http://10.0.0.${i + 1}:8000`, models: ['m'], labels: {}, ready: true, draining: false })) });
  const store = new SharedStore(
    createRedisClient(configSchema.parse({ redis: { url: redis.url } }).redis, () => ''),
    { keyPrefix: 'staleness:', breaker: { failures: 3, openMs: 1000 }, commandTimeoutMs: 50 },
    { commandDone: (command, seconds) => command === 'fleet_publish' && roundTrips.push(seconds * 1000), commandFailed: () => {}, breakerMoved: () => {}, statusChanged: () => {} },
  );
  const fleet = new FleetLoad(store, view, { replicaId: id, publishIntervalMs: INTERVAL_MS, replicaTtlMs: 20 * INTERVAL_MS });
  return { view, store, fleet };
});
while (replicas.some((r) => r.store.status !== 'up')) await new Promise((resolve) => setTimeout(resolve, 10));
// Replicas start at unrelated moments: their publish timers are out of phase.
for (const r of replicas) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * INTERVAL_MS));
  r.fleet.start();
}

const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
const aStates = [...a.view.all()];
const bStates = [...b.view.all()];
const tokens: number[][] = aStates.map(() => []);
const delays: number[] = [];
for (let change = 0; change < CHANGES; change++) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * INTERVAL_MS));
  const engine = Math.floor(Math.random() * ENGINES);
  const state = aStates[engine]!;
  if (tokens[engine]!.length > 0 && Math.random() < 0.5) a.view.settle(state, tokens[engine]!.pop()!);
  else tokens[engine]!.push(a.view.begin(state));
  const changedAt = performance.now();
  const expected = state.inFlight;
  while (bStates[engine]!.othersInFlight !== expected) await new Promise((resolve) => setTimeout(resolve, 1));
  delays.push(performance.now() - changedAt);
}
for (const r of replicas) r.fleet.stop();
await Promise.all(replicas.map((r) => r.store.close()));
await redis.stop();

const q = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
console.log(`publish interval ${INTERVAL_MS} ms, 3 replicas, ${ENGINES} engines, ${CHANGES} changes on replica A`);
console.log(`| | p50 | p90 | p99 | max | mean |`);
console.log(`|---|---|---|---|---|---|`);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
for (const [name, xs] of [['B sees A\'s change after (ms)', delays], ['publish+read round trip (ms)', roundTrips]] as const) {
  console.log(`| ${name} | ${q(xs, 0.5).toFixed(1)} | ${q(xs, 0.9).toFixed(1)} | ${q(xs, 0.99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} | ${mean(xs).toFixed(1)} |`);
}

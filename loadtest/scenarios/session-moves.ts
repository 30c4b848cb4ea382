/**
 * The warm-up issue's session rows, counted (no assertions), against a
 * checkout of switchyard, at default settings:
 *
 * 1. a fresh router over 3 idle engines with room to spare, 40 session keys
 *    x 10 rounds of 40 concurrent requests: requests moved off their
 *    session's engine;
 * 2. a second router started separately: keys sent to the same engine;
 * 3. three replicas with one Redis, 60 sessions x 10 requests round-robin
 *    over them: sessions kept on one engine;
 * 4. a fourth replica that also knows a new engine, 4 more rounds: the same.
 *
 * The regression tests (tests/e2e/warm-up*.e2e.ts) assert the same; this
 * prints the counts of any checkout, for a before/after on one machine.
 *
 *   node loadtest/scenarios/session-moves.ts [DIR]   # DIR: a checkout with its modules installed (default: this one)
 */
import { resolve } from 'node:path';
import type * as Harness from '../../tests/kit/harness.ts';
import type * as RedisTestServer from '../../tests/kit/redis/redis-server.ts';
import type * as Simulator from '../sim/server.ts';

const root = resolve(process.argv[2] ?? '.');
const { EngineSimulator } = (await import(`${root}/loadtest/sim/server.ts`)) as typeof Simulator;
const { postJson, servedBy, startInProcessRouter } = (await import(`${root}/tests/kit/harness.ts`)) as typeof Harness;
const { startRedisServer } = (await import(`${root}/tests/kit/redis/redis-server.ts`)) as typeof RedisTestServer;

const chat = (base: string, id: string, session: string) =>
  postJson(`${base}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-request-id': id, 'x-session-id': session });

const engines: Simulator.EngineSimulator[] = [];
for (let i = 0; i < 4; i++) {
  const engine = new EngineSimulator({ model: 'm', knobs: { maxSeqs: 1_000_000, ttftMs: 30, itlMs: 5, outputTokens: 8 } });
  await engine.listen();
  engines.push(engine);
}
const three = engines.slice(0, 3);
const backends = (list: readonly Simulator.EngineSimulator[]) => list.flatMap((e) => ['--backend', e.url]);

// Rows 1 and 2.
const first = await startInProcessRouter(backends(three), 3);
const home = new Map<string, number>();
let moved = 0;
for (let round = 0; round < 10; round++) {
  await Promise.all(Array.from({ length: 40 }, (_, k) => chat(first.base, `a-${round}-${k}`, `k${k}`)));
  for (let k = 0; k < 40; k++) {
    const engine = servedBy(engines, `a-${round}-${k}`);
    if (!home.has(`k${k}`)) home.set(`k${k}`, engine);
    else if (home.get(`k${k}`) !== engine) moved++;
  }
}
const second = await startInProcessRouter(backends(three), 3);
await Promise.all(Array.from({ length: 40 }, (_, k) => chat(second.base, `b-${k}`, `k${k}`)));
const agreed = Array.from({ length: 40 }, (_, k) => servedBy(engines, `b-${k}`) === home.get(`k${k}`)).filter(Boolean).length;
console.log(`row 1: ${moved} of 400 requests moved off their session's engine; row 2: ${agreed}/40 keys on the same engine`);
await first.router.close();
await second.router.close();

// Rows 3 and 4. Each replica is connected to Redis before it takes traffic, as a rollout's new pod is.
const redis = await startRedisServer();
const replicas: Harness.StartedRouter[] = [];
async function replica(known: readonly Simulator.EngineSimulator[]): Promise<void> {
  const started = await startInProcessRouter([...backends(known), '--redis-url', redis.url, '--redis-command-timeout-ms', '1000'], known.length);
  replicas.push(started);
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((wake) => setTimeout(wake, 20))) {
    if (((await (await fetch(`${started.admin}/readyz`)).json()) as { sharedState?: string }).sharedState === 'up') return;
  }
}
const served = new Map<string, Set<number>>();
async function rounds(prefix: string, count: number): Promise<void> {
  for (let round = 0; round < count; round++) {
    await Promise.all(Array.from({ length: 60 }, (_, s) => chat((replicas[(s + round) % replicas.length] as Harness.StartedRouter).base, `${prefix}-${round}-${s}`, `s${s}`)));
    for (let s = 0; s < 60; s++) served.set(`s${s}`, (served.get(`s${s}`) ?? new Set<number>()).add(servedBy(engines, `${prefix}-${round}-${s}`)));
  }
}
const kept = () => [...served.values()].filter((set) => set.size === 1).length;
for (let i = 0; i < 3; i++) await replica(three);
await rounds('three', 10);
console.log(`row 3: ${kept()}/60 sessions kept on one engine over 600 requests round-robin over three replicas`);
await replica(engines);
await rounds('four', 4);
console.log(`row 4: ${kept()}/60 sessions kept once a fourth replica that knows a new engine joined`);
for (const r of replicas) await r.router.close();
await redis.stop();
for (const engine of engines) await engine.close();

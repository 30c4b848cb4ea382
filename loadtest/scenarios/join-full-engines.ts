/**
 * A replica joining a warm fleet of small engines that run full without a
 * queue (a scale-out because load rose): 3 engine simulators of 8 slots,
 * two router replicas at default settings (with `admission.maxWaiting` 5 and
 * a router queue) carrying exactly the engines' 24 slots as 24 closed-loop
 * clients, then a third replica started while that load goes on, and from
 * its first request the load rises to 36 clients spread evenly over the
 * three. Every engine's queue is sampled every 50 ms from the joiner's first
 * request (the engines run in this process, so the sample is exact): it must
 * stay within `admission.maxWaiting`. Without Redis, without Redis with the
 * replica count known (`load.replicas` 3, as the chart's Service count gives
 * it), and with Redis.
 *
 *   node loadtest/scenarios/join-full-engines.ts [--rounds 3] [--out DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import type { EngineSimulator } from '../sim/server.ts';
import { closeSimulatedFleet, startSimulatedFleet, type EngineSpec } from './fleet.ts';
import { runIfMain } from './results.ts';
import { flushRedis } from './shared-state-redis.ts';
import { startRouterSystem, stopAll, type System } from './systems.ts';

const MODEL = 'join-full-model';
const ENGINES: readonly EngineSpec[] = ['A', 'B', 'C'].map((name) => ({ name, maxSeqs: 8, ttftMs: 100, itlMs: 10, outputTokens: 16 }));
const MAX_WAITING = 5;
/** Clients before the join: the engines' slots exactly. */
const WARM_CLIENTS = 24;
/** Clients from the joiner's first request on, spread evenly over the three replicas. */
const JOINED_CLIENTS = 36;
const WARM_MS = 6_000;
const JOINED_MS = 5_000;
const ROUTER_ARGS = ['--admission-max-waiting', String(MAX_WAITING), '--admission-queue-length', '2000', '--admission-queue-max-wait-ms', '60000'];

interface Variant {
  readonly name: string;
  readonly args: readonly string[];
  readonly redis: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: 'no Redis', args: [], redis: false },
  { name: 'no Redis, replica count 3', args: ['--load-replicas', '3'], redis: false },
  { name: 'Redis', args: [], redis: true },
];

interface RoundResult {
  /** Largest `num_requests_waiting` per engine from the joiner's first request on. */
  readonly maxWaiting: number[];
  /** The same over the warm load's last 3 s before the joiner started: what the warm two alone leave queued. */
  readonly maxWaitingBefore: number[];
  /** Requests answered 200 through the joiner and through the warm replicas after the join. */
  readonly joinerOk: number;
  readonly warmOk: number;
  readonly failed: number;
}

const agent = new Agent({ connections: 256, pipelining: 1 });

/** One non-streamed request through `base`: true when answered 200. */
async function ask(base: string, id: string): Promise<boolean> {
  try {
    const response = await request(`${base}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }),
    });
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

async function round(engines: readonly EngineSimulator[], variant: Variant, redis: RedisServer | undefined, index: number): Promise<RoundResult> {
  if (redis !== undefined) await flushRedis(redis.url);
  const args = [...ROUTER_ARGS, ...variant.args, ...(redis === undefined ? [] : ['--redis-url', redis.url])];
  const urls = engines.map((e) => e.url);
  const start = () => startRouterSystem(urls, { args });
  const systems: System[] = [await start(), await start()];
  /** Where each client lane sends: the warm two until the joiner is up, then all three. */
  let bases = systems.map((s) => s.url);
  let joinerUrl: string | undefined;
  let joinedAt: number | undefined;
  let joinerStartedAt = Number.POSITIVE_INFINITY;
  let stopAt = Number.POSITIVE_INFINITY;
  const counts = { joinerOk: 0, warmOk: 0, failed: 0 };
  const lane = async (n: number): Promise<void> => {
    for (let i = 0; performance.now() < stopAt; i++) {
      const base = bases[(n + i) % bases.length] as string;
      const afterJoin = joinedAt !== undefined;
      if (base === joinerUrl) joinedAt ??= performance.now();
      const ok = await ask(base, `join-full-${index}-${n}-${i}`);
      if (!ok) counts.failed++;
      else if (base === joinerUrl) counts.joinerOk++;
      else if (afterJoin) counts.warmOk++;
    }
  };
  const samples: { at: number; waiting: number[] }[] = [];
  const sampler = setInterval(() => samples.push({ at: performance.now(), waiting: engines.map((e) => e.scheduler.waiting) }), 50);
  try {
    const lanes = Array.from({ length: WARM_CLIENTS }, (_, n) => lane(n));
    await new Promise((resolve) => setTimeout(resolve, WARM_MS));
    joinerStartedAt = performance.now();
    const joiner = await start();
    systems.push(joiner);
    joinerUrl = joiner.url;
    bases = systems.map((s) => s.url);
    stopAt = performance.now() + JOINED_MS;
    lanes.push(...Array.from({ length: JOINED_CLIENTS - WARM_CLIENTS }, (_, n) => lane(WARM_CLIENTS + n)));
    await Promise.all(lanes);
  } finally {
    clearInterval(sampler);
    await stopAll(systems);
  }
  // From the sample before the joiner's first request on.
  const from = samples.findIndex((s) => joinedAt !== undefined && s.at >= joinedAt);
  const window = from < 0 ? [] : samples.slice(Math.max(0, from - 1));
  const before = samples.filter((s) => s.at < joinerStartedAt && s.at >= joinerStartedAt - 3_000);
  const maxOf = (list: typeof samples) => engines.map((_, i) => Math.max(0, ...list.map((s) => s.waiting[i] as number)));
  return { maxWaiting: maxOf(window), maxWaitingBefore: maxOf(before), ...counts };
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { rounds: { type: 'string', default: '3' }, out: { type: 'string', default: 'loadtest/results/join-full-engines' } } });
  const rounds = Number(values.rounds);
  const engines = await startSimulatedFleet(MODEL, ENGINES);
  const redis = VARIANTS.some((v) => v.redis) ? await startRedisServer() : undefined;
  const results = new Map<string, RoundResult[]>(VARIANTS.map((v) => [v.name, []]));
  try {
    for (let r = 0; r < rounds; r++) {
      for (const variant of VARIANTS) {
        const result = await round(engines, variant, variant.redis ? redis : undefined, r);
        results.get(variant.name)?.push(result);
        console.error(`round ${r + 1} ${variant.name}: engines waiting max ${result.maxWaiting.join('/')} (before the join ${result.maxWaitingBefore.join('/')}), joiner ${result.joinerOk} × 200, warm ${result.warmOk} × 200 after the join, ${result.failed} failed`);
      }
    }
  } finally {
    await redis?.stop();
    await closeSimulatedFleet(engines);
    await agent.close();
  }
  const rows = [...results].map(([name, list]) => {
    const worst = Math.max(...list.flatMap((r) => r.maxWaiting));
    const per = list.map((r) => r.maxWaiting.join('/')).join(', ');
    const before = list.map((r) => r.maxWaitingBefore.join('/')).join(', ');
    const sum = (pick: (r: RoundResult) => number) => list.reduce((n, r) => n + pick(r), 0);
    return `| ${name} | ${before} | ${per} | ${worst <= MAX_WAITING ? 'within' : '**over**'} | ${sum((r) => r.joinerOk)} / ${sum((r) => r.warmOk)} | ${sum((r) => r.failed)} |`;
  });
  const table = [
    `A replica joining two warm ones whose ${WARM_CLIENTS} clients keep 3 engines of 8 slots full without a queue; from the joiner's first request ${JOINED_CLIENTS} clients spread over the three for ${JOINED_MS / 1000} s; \`admission.maxWaiting\` ${MAX_WAITING}, router queue on, defaults otherwise; engine queues sampled every 50 ms from the joiner's first request; ${rounds} rounds.`,
    '',
    `| shared state | max engine waiting per round, the warm two alone (last 3 s) | from the joiner's first request | bound (${MAX_WAITING}) | 200 through the joiner / the warm two after the join | failed |`,
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  console.log(table);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'join-full-engines.md'), table + '\n');
  return 0;
}

runIfMain(import.meta.url, main);

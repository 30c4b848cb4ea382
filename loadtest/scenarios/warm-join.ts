/**
 * A replica joining a warm fleet (a rollout step, an HPA scale-out): two
 * router replicas warmed by a stream load on two large engines that never
 * queue, then a third started, then 300 concurrent streams split evenly
 * over the three at once. Reports the joiner's time to first byte beside the
 * warm replicas' in the same seconds, for the router at default settings,
 * the same with the safe start off (what a warm router costs), with the
 * replica count known (as the chart's replicaCountFromService gives it
 * once the joiner's pod is listed in the Service; here `load.replicas` 3
 * for all three, where the Service would say 2 to the warm ones before), and
 * optionally another checkout (`--before DIR`), in interleaved rounds,
 * without and with Redis.
 *
 * With `--warm-through-join` the warm load goes on while the joiner starts
 * and through the burst, as in a rollout under traffic: the joiner's first
 * scrapes then show the engines busy.
 *
 *   node loadtest/scenarios/warm-join.ts [--rounds 5] [--redis both|on|off] [--warm-through-join] [--before DIR] [--out DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startRedisServer, type RedisServer } from '../../tests/kit/redis/redis-server.ts';
import { medianOf, ms, runIfMain } from './results.ts';
import { routerCheckout, SAFE_START_OFF, startEngineProcesses, startRouterSystem, stopAll, type RouterCheckout, type System } from './systems.ts';

const MODEL = 'join-model';
/** Large engines: room for every stream at once, so they never show a queue. ~0.5 s a stream. */
const ENGINE_ARGS = ['--max-seqs', '1024', '--ttft-ms', '40', '--itl-ms', '10', '--output-tokens', '40'];
const WARM_STREAMS = 200;
const WARM_MS = 8_000;
const JOIN_STREAMS = 300;

interface Variant {
  readonly name: string;
  readonly args: readonly string[];
  readonly checkout?: RouterCheckout;
}

/** One round of one variant: first-byte times (ms) of the joiner's streams and of the warm replicas'. */
interface RoundResult {
  readonly joiner: number[];
  readonly warm: number[];
  readonly failed: number;
}

const agent = new Agent({ connections: 2_048, pipelining: 1, keepAliveTimeout: 10_000 });

/** One stream through `base`: resolves its time to first body byte (ms), or undefined when it failed. */
async function stream(base: string, id: string): Promise<number | undefined> {
  const started = performance.now();
  try {
    const response = await request(`${base}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hello' }] }),
    });
    let first: number | undefined;
    for await (const _chunk of response.body) first ??= performance.now() - started;
    return response.statusCode === 200 ? first : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `concurrency` streams open through `bases` (round-robin) until `signal` fires. */
async function steady(bases: readonly string[], concurrency: number, signal: AbortSignal): Promise<void> {
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (!signal.aborted) await stream(bases[(lane + n++) % bases.length] as string, `warm-${lane}-${n}`);
    }),
  );
}

async function round(engines: readonly string[], variant: Variant, redis: RedisServer | undefined, warmThroughJoin: boolean): Promise<RoundResult> {
  const args = [...variant.args, ...(redis === undefined ? [] : ['--redis-url', redis.url])];
  const start = () => startRouterSystem(engines, { args, ...(variant.checkout === undefined ? {} : { checkout: variant.checkout }) });
  const warm: System[] = [await start(), await start()];
  const systems = [...warm];
  try {
    const warming = new AbortController();
    const load = steady(warm.map((s) => s.url), WARM_STREAMS, warming.signal);
    await new Promise((resolve) => setTimeout(resolve, WARM_MS));
    // A rollout or scale-out under traffic: the warm load goes on while the joiner starts and takes its share.
    if (!warmThroughJoin) {
      warming.abort();
      await load;
    }
    const joiner = await start();
    systems.push(joiner);
    const all = [...warm, joiner];
    const times = await Promise.all(Array.from({ length: JOIN_STREAMS }, (_, i) => stream((all[i % 3] as System).url, `join-${i}`)));
    warming.abort();
    await load;
    const joinerTimes: number[] = [];
    const warmTimes: number[] = [];
    let failed = 0;
    times.forEach((t, i) => {
      if (t === undefined) failed++;
      else (i % 3 === 2 ? joinerTimes : warmTimes).push(t);
    });
    return { joiner: joinerTimes, warm: warmTimes, failed };
  } finally {
    await stopAll(systems);
  }
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { rounds: { type: 'string', default: '5' }, redis: { type: 'string', default: 'both' }, 'warm-through-join': { type: 'boolean', default: false }, before: { type: 'string' }, out: { type: 'string', default: 'loadtest/results/warm-join' } } });
  const rounds = Number(values.rounds);
  const before = routerCheckout(values.before);
  const variants: Variant[] = [
    { name: 'switchyard (default)', args: [] },
    { name: 'switchyard, safe start off', args: SAFE_START_OFF },
    // What a replica counting its Service's pods (load.replicasFromService, the chart's default) knows once the joiner is listed.
    { name: 'switchyard, replica count 3', args: ['--load-replicas', '3'] },
    ...(before === undefined ? [] : [{ name: `${before.name} (default)`, args: [], checkout: before }]),
  ];
  const modes = values.redis === 'both' ? [false, true] : [values.redis === 'on'];
  const engines = await startEngineProcesses(2, MODEL, ENGINE_ARGS);
  const rows: string[] = [];
  const json: Record<string, unknown> = {};
  try {
    for (const withRedis of modes) {
      const redis = withRedis ? await startRedisServer() : undefined;
      const results = new Map<string, RoundResult[]>(variants.map((v) => [v.name, []]));
      try {
        for (let r = 0; r < rounds; r++) {
          for (const variant of variants) {
            const result = await round(engines.urls, variant, redis, values['warm-through-join']);
            results.get(variant.name)?.push(result);
            console.error(`${withRedis ? 'redis' : 'no redis'} round ${r + 1} ${variant.name}: joiner p50/p99 ${ms(quantile(result.joiner, 0.5))}/${ms(quantile(result.joiner, 0.99))} ms, warm ${ms(quantile(result.warm, 0.5))}/${ms(quantile(result.warm, 0.99))} ms, ${result.failed} failed`);
          }
        }
      } finally {
        await redis?.stop();
      }
      for (const [name, list] of results) {
        const stat = (pick: (r: RoundResult) => number[], q: number) => medianOf(list.map((r) => quantile(pick(r), q))).median;
        const joiner = [stat((r) => r.joiner, 0.5), stat((r) => r.joiner, 0.99)] as const;
        const warm = [stat((r) => r.warm, 0.5), stat((r) => r.warm, 0.99)] as const;
        const failed = list.reduce((n, r) => n + r.failed, 0);
        rows.push(`| ${withRedis ? 'Redis' : 'no Redis'} | ${name} | ${ms(joiner[0])} / ${ms(joiner[1])} | ${ms(warm[0])} / ${ms(warm[1])} | ${(joiner[0] / warm[0]).toFixed(2)}× / ${(joiner[1] / warm[1]).toFixed(2)}× | ${failed} |`);
        json[`${withRedis ? 'redis' : 'local'}:${name}`] = { joiner, warm, failed, rounds: list.length };
      }
    }
  } finally {
    await engines.stop();
    await agent.close();
  }
  const table = [
    `A replica joining a warm fleet of two: ${JOIN_STREAMS} concurrent streams split over the three at once, 2 large engines${values['warm-through-join'] ? `, the warm load (${WARM_STREAMS} streams over the warm two) going on through the join` : ', the warm load stopped before the join'}; median of ${rounds} interleaved rounds.`,
    '',
    '| shared state | router | joiner TTFB p50 / p99 ms | warm replicas p50 / p99 ms | joiner ÷ warm p50 / p99 | non-200 |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  console.log(table);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'warm-join.md'), table + '\n');
  writeFileSync(join(values.out, 'warm-join.json'), JSON.stringify(json, null, 2) + '\n');
  return 0;
}

runIfMain(import.meta.url, main);

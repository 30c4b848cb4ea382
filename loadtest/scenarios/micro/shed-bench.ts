/**
 * What shedding costs: a router whose only engine is saturated, offered 5,000
 * requests per second (open loop) for a few seconds; every answer must be a
 * 429. Reports the time the router takes to answer (its own
 * switchyard_shed_duration_seconds histogram), the latency the client sees
 * (which includes the client's own stalls), and the router's CPU time per
 * shed request. The router is pinned to core 0, this client to core 1.
 *
 *   node loadtest/scenarios/micro/shed-bench.ts [--rate 5000] [--duration-s 5]
 *
 * Exits 1 when any answer is not a 429 or the router-side p99 passes 1 ms.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { EngineSimulator } from '../../sim/server.ts';
import { canPin, cpuTimeMs } from '../../../tests/kit/processes.ts';
import { spawnSwitchyard } from '../../../tests/kit/router-process.ts';
import { summarize } from '../../bench/stats.ts';

const { values } = parseArgs({ options: { rate: { type: 'string', default: '5000' }, 'duration-s': { type: 'string', default: '5' } } });
const RATE = Number(values.rate);
const DURATION_MS = Number(values['duration-s']) * 1000;
const MODEL = 'shed-model';
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });

/** p50 and p99 upper bucket bounds (ms) of switchyard_shed_duration_seconds in a /metrics body. */
function shedQuantiles(text: string): { p50: number; p99: number } {
  const buckets: [number, number][] = [];
  for (const line of text.split('\n')) {
    const match = /^switchyard_shed_duration_seconds_bucket\{le="([^"]+)"\} (\d+)/.exec(line);
    if (match) buckets.push([match[1] === '+Inf' ? Infinity : Number(match[1]) * 1000, Number(match[2])]);
  }
  const total = buckets.at(-1)?.[1] ?? 0;
  const at = (q: number) => buckets.find(([, count]) => count >= q * total)?.[0] ?? Infinity;
  return { p50: at(0.5), p99: at(0.99) };
}

const pinned = canPin();
if (pinned) execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 1, ttftMs: 0, itlMs: 0 } });
await engine.listen();
// Keep the engine full behind the router's back: one running, one waiting.
const hold = new AbortController();
const held = [0, 1].map(() =>
  fetch(`${engine.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '600000' }, body: BODY, signal: hold.signal }).catch(() => undefined),
);
const router = await spawnSwitchyard(
  ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, '--admission-max-waiting', '0', '--scrape-interval-ms', '100'],
  { core: pinned ? 0 : undefined },
);
const base = `http://127.0.0.1:${router.ports['traffic'] as number}`;
const pool = new Pool(base, { connections: 128, pipelining: 1 });
const send = async (): Promise<[number, number]> => {
  const sent = performance.now();
  const response = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
  await response.body.dump();
  return [response.statusCode, performance.now() - sent];
};
// Wait until the router sees the engine saturated.
for (let i = 0; i < 200 && (await send())[0] !== 429; i++) await new Promise((resolve) => setTimeout(resolve, 50));

const cpuBefore = cpuTimeMs(router.child.pid);
const latencies: number[] = [];
const statuses = new Map<number, number>();
const pending: Promise<void>[] = [];
const start = performance.now();
for (let i = 0; ; i++) {
  const due = start + (i * 1000) / RATE;
  if (due - start >= DURATION_MS) break;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  pending.push(
    send().then(([status, ms]) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      latencies.push(ms);
    }),
  );
}
await Promise.all(pending);
const elapsed = performance.now() - start;
const cpuAfter = cpuTimeMs(router.child.pid);
const routerSide = shedQuantiles(await (await fetch(`http://127.0.0.1:${router.ports['admin'] as number}/metrics`)).text());
await pool.close();
await router.stop();
hold.abort();
await Promise.all(held);
await engine.close();

const summary = summarize(latencies);
const shed = statuses.get(429) ?? 0;
const cpuPerShedUs = cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / latencies.length;
console.log('| offered | achieved | answers | inside the router: p50 / p99 (ms, bucket bound) | at the client: p50 / p99 / max (ms) | router CPU | router CPU per shed |');
console.log('|---|---|---|---|---|---|---|');
console.log(
  `| ${RATE}/s | ${((latencies.length * 1000) / elapsed).toFixed(0)}/s | ${JSON.stringify(Object.fromEntries(statuses))} | ≤ ${routerSide.p50} / ≤ ${routerSide.p99} | ${summary.p50.toFixed(3)} / ${summary.p99.toFixed(3)} / ${summary.max.toFixed(2)} | ${cpuBefore === undefined || cpuAfter === undefined ? '-' : `${((100 * (cpuAfter - cpuBefore)) / elapsed).toFixed(0)}% of a core`} | ${cpuPerShedUs === undefined ? '-' : `${cpuPerShedUs.toFixed(0)} µs`} |`,
);
// The bar is the router's own time: the client's p99 includes its own event-loop stalls.
const pass = shed === latencies.length && routerSide.p99 <= 1;
console.log(pass ? 'PASS: every answer a 429, p99 inside the router at most 1 ms' : `FAIL: ${shed} of ${latencies.length} were 429, router-side p99 ≤ ${routerSide.p99} ms`);
process.exitCode = pass ? 0 : 1;

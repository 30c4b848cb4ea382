/**
 * How much CPU scraping costs: a router with 500 endpoints scraping each
 * engine's /metrics every second, no request traffic, router CPU measured
 * from /proc over a fixed window after every endpoint's first scrape.
 *
 *   node loadtest/scenarios/micro/scrape-bench.ts [--count 500] [--window-s 10]
 *
 * Exits 1 when the router uses 10% of one core or more.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuTimeMs } from '../../../tests/kit/processes.ts';
import { spawnSwitchyard } from '../../../tests/kit/router-process.ts';

const { values } = parseArgs({ options: { count: { type: 'string', default: '500' }, 'window-s': { type: 'string', default: '10' } } });
const COUNT = Number(values.count);
const WINDOW_MS = Number(values['window-s']) * 1000;
const BUDGET = 0.1;

const enginesScript = fileURLToPath(new URL('./many-engines.ts', import.meta.url));
const engines = spawn(process.execPath, [enginesScript, '--count', String(COUNT)], { stdio: ['ignore', 'pipe', 'inherit'] });
const ports = await new Promise<number[]>((resolve, reject) => {
  let text = '';
  engines.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    const line = text.split('\n').find((l) => l.includes('engines listening'));
    if (line) resolve((JSON.parse(line) as { ports: number[] }).ports);
  });
  engines.once('exit', (code) => reject(new Error(`engines exited with ${String(code)}`)));
});

const router = await spawnSwitchyard(
  ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--scrape-interval-ms', '1000', '--log-level', 'info', ...ports.flatMap((p) => ['--backend', `http://127.0.0.1:${p}`])],
).catch((err: unknown) => {
  engines.kill();
  throw err;
});
try {
  const admin = `http://127.0.0.1:${router.ports['admin'] as number}`;
  // Wait until every endpoint has a fresh scrape.
  for (;;) {
    const doc = (await (await fetch(`${admin}/debug/endpoints`)).json()) as { endpoints: { scrape: { stale: boolean } }[] };
    if (doc.endpoints.length === COUNT && doc.endpoints.every((e) => !e.scrape.stale)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const before = cpuTimeMs(router.child.pid);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const after = cpuTimeMs(router.child.pid);
  const elapsed = performance.now() - started;
  const doc = (await (await fetch(`${admin}/debug/endpoints`)).json()) as { endpoints: { scrape: { stale: boolean; ageMs: number } }[] };
  const stale = doc.endpoints.filter((e) => e.scrape.stale).length;
  const maxAge = Math.max(...doc.endpoints.map((e) => e.scrape.ageMs));
  if (before === undefined || after === undefined) throw new Error('/proc is not available here');
  const share = (after - before) / elapsed;
  console.log(`| endpoints | scrape interval | window | router CPU (of one core) | stale at end | oldest scrape at end |`);
  console.log(`|---|---|---|---|---|---|`);
  console.log(`| ${COUNT} | 1 s | ${(elapsed / 1000).toFixed(1)} s | ${(share * 100).toFixed(1)}% | ${stale} | ${maxAge} ms |`);
  console.log(share < BUDGET && stale === 0 ? `PASS: under ${BUDGET * 100}% of one core, no stale endpoint` : 'FAIL');
  process.exitCode = share < BUDGET && stale === 0 ? 0 : 1;
} finally {
  await router.stop();
  engines.kill('SIGTERM');
}

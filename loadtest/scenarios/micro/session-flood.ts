/**
 * One client flooding unique session keys against a router with Redis, at
 * the chart's heap cap (issue 36, item 1): the router's heap, after a full
 * GC, at checkpoints of the flood, and whether the router survived.
 *
 *   node loadtest/scenarios/micro/session-flood.ts [--requests 50000] [--key-bytes 15000] [--concurrency 16] [--json out.json]
 *
 * Starts a real redis-server, one engine simulator and `switchyard serve`
 * with `--max-old-space-size=384` (charts/switchyard `heapMaxOldSpaceMiB`),
 * then sends `--requests` chat requests, each with a new `x-session-id` of
 * `--key-bytes`. The heap is read from the router's /metrics after a full GC
 * (tests/kit/gc-on-signal.ts) at 5,000 requests and every 5,000 after.
 * Exits 1 when the router exits or the heap at the end is more than 32 MiB
 * above the heap at 5,000.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { postJson, startRouterProcess } from '../../../tests/kit/harness.ts';
import { startRedisServer } from '../../../tests/kit/redis/redis-server.ts';
import { EngineSimulator } from '../../sim/server.ts';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '50000' }, 'key-bytes': { type: 'string', default: '15000' }, concurrency: { type: 'string', default: '16' }, json: { type: 'string' } },
});
const REQUESTS = Number(values.requests);
const KEY_BYTES = Number(values['key-bytes']);
const CONCURRENCY = Number(values.concurrency);
const CHECK_EVERY = 5_000;
const MODEL = 'flood-model';
const MiB = 2 ** 20;

const redis = await startRedisServer();
const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 256, ttftMs: 0, itlMs: 0, outputTokens: 1 } });
await engine.listen();
const router = await startRouterProcess(
  ['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--log-level', 'info', '--backend', engine.url, '--redis-url', redis.url],
  ['--max-old-space-size=384', '--expose-gc', '--import', fileURLToPath(new URL('../../../tests/kit/gc-on-signal.ts', import.meta.url))],
);
let exited: string | undefined;
router.child.once('exit', (code, signal) => (exited = `code ${String(code)}, signal ${String(signal)}`));
let stderr = '';
router.child.stderr?.on('data', (text: string) => (stderr = (stderr + text).slice(-2_000)));
const base = `http://127.0.0.1:${router.traffic}`;
const admin = `http://127.0.0.1:${router.admin}`;

const chat = async (key: string) =>
  (await postJson(`${base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }, { 'x-session-id': key })).status;

async function heldHeapMiB(): Promise<number> {
  router.child.kill('SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const text = await (await fetch(`${admin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes '));
  return Number(line?.split(' ')[1]) / MiB;
}

while ((await chat('warm').catch(() => 0)) !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
const rows: { requests: number; heapMiB: number; seconds: number }[] = [];
const filler = 'k'.repeat(KEY_BYTES - 12);
const started = performance.now();
let next = 0;
let failed = 0;
while (next < REQUESTS && exited === undefined) {
  const end = Math.min(REQUESTS, next + CHECK_EVERY);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < end && exited === undefined) {
        const n = next++;
        const status = await chat(`${String(n).padStart(12, '0')}${filler}`).catch(() => 0);
        if (status !== 200) failed++;
      }
    }),
  );
  if (exited !== undefined) break;
  rows.push({ requests: end, heapMiB: await heldHeapMiB(), seconds: (performance.now() - started) / 1000 });
  const row = rows.at(-1)!;
  console.log(`${String(row.requests).padStart(7)} requests  heap ${row.heapMiB.toFixed(1).padStart(6)} MiB  ${row.seconds.toFixed(0)} s`);
}
const first = rows[0]?.heapMiB ?? NaN;
const last = rows.at(-1)?.heapMiB ?? NaN;
const summary = { requests: next, keyBytes: KEY_BYTES, concurrency: CONCURRENCY, failed, exited: exited ?? null, heapAt5kMiB: first, heapAtEndMiB: last, rows };
console.log(exited === undefined ? `heap at ${rows.at(-1)?.requests} requests ${last.toFixed(1)} MiB, ${(last - first).toFixed(1)} MiB above 5,000; ${failed} not answered 200` : `the router exited (${exited}) after ~${next} requests: ${stderr.slice(-500)}`);
if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(summary, null, 2));
const passed = exited === undefined && last - first <= 32;
if (exited === undefined) {
  router.child.kill('SIGKILL');
  await router.exit;
}
await engine.close();
await redis.stop();
process.exit(passed ? 0 : 1);

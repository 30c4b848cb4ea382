/**
 * What the engine simulator's KV-block model costs per request, so a
 * benchmark knows whether its simulated fleet (8 engines × 24 slots in the
 * prefix-affinity scenario) fits on this machine next to the router.
 *
 *   node loadtest/scenarios/micro/sim-kv-bench.ts [--kib 32] [--json out.json]
 *
 * Rows, each timed per call (process.hrtime.bigint) after a warm-up, on
 * multi-turn chat bodies of `--kib` KiB, a pool of 24k blocks (384k tokens,
 * as in the design's toy benchmark):
 * - JSON.parse of the body: what the simulator paid per request before, the
 *   baseline in the same run;
 * - the old token-count model's lookup (prefix-cache.ts, kvBlocks 0);
 * - cachedPrefixTokens on a fresh body object (render + hash + lookup; what
 *   the oracle pays once per request, the engines after the first reuse it);
 * - admit + finish with a 40-token answer (the whole per-request model
 *   cost), once where every block misses and is evicted again (64
 *   conversations in rotation through a pool that holds 46), once where
 *   every turn hits (16 conversations);
 * - a node:crypto SHA-256 chain per 64-byte block, the hash not chosen.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { EngineKv } from '../../sim/engine-kv.ts';
import { PrefixCache, promptBlocks } from '../../sim/prefix-cache.ts';
import { tokenText } from '../../sim/content.ts';

const { values } = parseArgs({ options: { kib: { type: 'string', default: '32' }, json: { type: 'string' } } });
const BYTES = Number(values.kib) * 1024;
const ITERATIONS = 2000;
const WARMUP = 300;
const MODEL = 'bench';

/** A conversation of about BYTES bytes: an 8 KiB system prompt, then user/assistant turns. */
function conversation(id: number): string {
  const messages = [{ role: 'system', content: `conversation ${id}: ${'You are a careful assistant. '.repeat(Math.floor(8192 / 30))}` }];
  for (let turn = 0; JSON.stringify(messages).length < BYTES - 600; turn++) {
    messages.push({ role: turn % 2 === 0 ? 'user' : 'assistant', content: `turn ${turn} of ${id}: ${'words and more words '.repeat(40)}` });
  }
  messages.push({ role: 'user', content: 'and now?' });
  return JSON.stringify({ model: MODEL, messages });
}

const bodies = Array.from({ length: 64 }, (_, i) => conversation(i));
const payloads = bodies.map((b) => JSON.parse(b) as Record<string, unknown>);
let answer = '';
for (let i = 0; i < 40; i++) answer += tokenText(i);

interface Row {
  name: string;
  p50Us: number;
  p99Us: number;
  meanUs: number;
}

function measure(name: string, run: (i: number) => number): Row {
  let sink = 0;
  for (let i = 0; i < WARMUP; i++) sink += run(i);
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    sink += run(i);
    samples[i] = Number(process.hrtime.bigint() - start);
  }
  if (!Number.isFinite(sink)) throw new Error('unused result');
  samples.sort();
  const at = (q: number) => (samples[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))] ?? Number.NaN) / 1e3;
  const round = (v: number) => Math.round(v * 10) / 10;
  return { name, p50Us: round(at(0.5)), p99Us: round(at(0.99)), meanUs: round(samples.reduce((a, b) => a + b, 0) / ITERATIONS / 1e3) };
}

// 24k blocks hold about 46 of the 64 conversations: visited in rotation, LRU evicts each before its return.
const kv = new EngineKv({ model: MODEL, blocks: 24_000, blockTokens: 16, clock: () => performance.now() });
const hitting = new EngineKv({ model: MODEL, blocks: 24_000, blockTokens: 16, clock: () => performance.now() });

/** One request's whole model cost: admission (lookup, pin) and finish (output blocks, unpin). */
function turn(engine: EngineKv, conversation: number): number {
  const admission = engine.admit({ ...(payloads[conversation] as Record<string, unknown>) }, 0, 40);
  if (admission === undefined) throw new Error('no prompt');
  engine.finish(admission, answer);
  return admission.cachedTokens;
}
const old = new PrefixCache();
const rows = [
  measure('baseline: JSON.parse of the body', (i) => Object.keys(JSON.parse(bodies[i % 64] as string) as object).length),
  measure('old token-count model lookup (kvBlocks 0)', (i) => (old.lookup(promptBlocks(payloads[i % 64] as Record<string, unknown>)), old.hitTokens)),
  measure('cachedPrefixTokens, fresh body object', (i) => kv.cachedTokens({ ...(payloads[i % 64] as Record<string, unknown>) })),
  measure('admit + finish, 64 conversations: all miss', (i) => turn(kv, i % 64)),
  measure('admit + finish, 16 conversations: all hit', (i) => turn(hitting, i % 16)),
  measure('alternative: SHA-256 chain per block', (i) => {
    const bytes = Buffer.from(bodies[i % 64] as string);
    let previous = Buffer.alloc(0);
    for (let offset = 0; offset + 64 <= bytes.length; offset += 64) previous = createHash('sha256').update(previous).update(bytes.subarray(offset, offset + 64)).digest();
    return previous[0] ?? 0;
  }),
];
console.log(`${ITERATIONS} calls each after ${WARMUP} warm-up, ${(bodies[0] as string).length} B bodies, node ${process.version}`);
console.table(rows.map((r) => ({ name: r.name, 'p50 µs': r.p50Us, 'p99 µs': r.p99Us, 'mean µs': r.meanUs })));
const miss = rows[3] as Row;
console.log(`model cost per request: p50 ${miss.p50Us} µs all-miss (hit ratio ${(kv.hitTokens / kv.queriedTokens).toFixed(2)}), ${(rows[4] as Row).p50Us} µs all-hit (hit ratio ${(hitting.hitTokens / hitting.queriedTokens).toFixed(2)}): ≈ ${Math.round(1e6 / miss.p50Us)} requests/s per core for the model alone`);
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify({ iterations: ITERATIONS, bytes: (bodies[0] as string).length, node: process.version, rows }, null, 2)}\n`);

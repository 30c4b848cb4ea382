/**
 * Micro-benchmark of what prefix affinity adds to one keyless chat request:
 * the canonical prompt prefix (json-body-scanner's `canonicalPrefix`, 64 KiB
 * cap) and its prefix keys (router/scheduling/prefix-keys.ts), on chat
 * bodies of 1 KB, 32 KB and 200 KB.
 *
 *   node --expose-gc loadtest/scenarios/micro/prefix-keys-bench.ts [--json out.json]
 *
 * Each call is timed on its own (process.hrtime.bigint) after a warm-up, and
 * every result is checked. Baselines in the same run: the same block chain
 * hashed with node:crypto (SHA-1 per 512-byte block, chained through the
 * previous digest: the obvious keyed alternative), and `JSON.parse` of the
 * body, the cost the body scanner exists to avoid. Allocation is the heap and
 * ArrayBuffer growth per call over batches started right after a GC (median
 * batch). Exits 1 when canonical prefix + keys at 32 KB reach 50 µs at p50,
 * the research note's whole-decision budget.
 */
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createPrefixKeys, MAX_BLOCKS, BLOCK_BYTES, PREFIX_KEY_BYTES, prefixKeys } from '../../../router/scheduling/prefix-keys.ts';
import { canonicalPrefix } from '../../../router/request/json-body-scanner.ts';

const ITERATIONS = 5_000;
const WARMUP = 2_000;
const BATCH = 200;
const BUDGET_US = 50;
const gc = (globalThis as { gc?: () => void }).gc;

/** A chat body of about `bytes`: a system prompt, then user/assistant turns, as an SDK resends them. */
function chatBody(bytes: number): { body: Buffer; span: { start: number; end: number } } {
  const text = (n: number, seed: number) => `Turn ${seed}: the quick brown fox jumps over the lazy dog. `.repeat(Math.ceil(n / 50)).slice(0, n);
  const messages = [{ role: 'system', content: text(Math.min(2_000, bytes / 4), 0) }];
  for (let t = 1; JSON.stringify(messages).length < bytes - 200; t++) messages.push({ role: t % 2 === 1 ? 'user' : 'assistant', content: text(Math.min(4_000, bytes / 8), t) });
  messages.push({ role: 'user', content: 'And so?' });
  const body = Buffer.from(JSON.stringify({ model: 'llama-3-8b', stream: true, messages }));
  const start = body.indexOf('"messages":') + '"messages":'.length;
  return { body, span: { start, end: body.lastIndexOf(']') + 1 } };
}

/** SHA-1 per block chained through the previous digest: the node:crypto alternative to the pure-JS chain. */
function sha1Chain(prefix: Buffer): number {
  let previous = Buffer.alloc(0);
  let blocks = 0;
  for (let at = 0; at < Math.min(prefix.length, MAX_BLOCKS * BLOCK_BYTES); at += BLOCK_BYTES, blocks++) {
    previous = hash('sha1', Buffer.concat([previous, prefix.subarray(at, at + BLOCK_BYTES)]), 'buffer');
  }
  return blocks;
}

interface Row {
  body: string;
  step: string;
  p50Us: number;
  p99Us: number;
  heapBytes: number;
  arrayBufferBytes: number;
}

function measure(body: string, step: string, run: () => unknown): Row {
  for (let i = 0; i < WARMUP; i++) assert.ok(run() !== undefined);
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    const result = run();
    samples[i] = Number(process.hrtime.bigint() - start);
    assert.ok(result !== undefined);
  }
  samples.sort();
  const at = (q: number) => (samples[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))] ?? NaN) / 1e3;
  const heap: number[] = [];
  const arrayBuffers: number[] = [];
  for (let b = 0; b < 9; b++) {
    gc?.();
    const before = process.memoryUsage();
    for (let i = 0; i < BATCH; i++) run();
    const after = process.memoryUsage();
    heap.push((after.heapUsed - before.heapUsed) / BATCH);
    arrayBuffers.push((after.arrayBuffers - before.arrayBuffers) / BATCH);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
  const round = (v: number) => Math.round(v * 100) / 100;
  return { body, step, p50Us: round(at(0.5)), p99Us: round(at(0.99)), heapBytes: Math.round(median(heap)), arrayBufferBytes: Math.round(median(arrayBuffers)) };
}

const { values } = parseArgs({ options: { json: { type: 'string' } } });
if (gc === undefined) console.log('(run with --expose-gc for allocation figures)');
const rows: Row[] = [];
for (const [name, size] of [
  ['1 KB', 1_000],
  ['32 KB', 32_000],
  ['200 KB', 200_000],
] as const) {
  const { body, span } = chatBody(size);
  const canonical = canonicalPrefix(body, span, PREFIX_KEY_BYTES);
  assert.ok(canonical !== undefined);
  const { bytes: prefix, truncated } = canonical;
  const into = createPrefixKeys();
  const keys = () => prefixKeys('llama-3-8b', undefined, 'chat', prefix, truncated, into);
  assert.ok(keys().historyTokens > 0 || size < 2_000);
  const label = `${name} (${(body.length / 1024).toFixed(0)} KiB body, ${prefix.length} B prefix${truncated ? ', cut' : ''})`;
  rows.push(measure(label, 'canonicalPrefix', () => canonicalPrefix(body, span, PREFIX_KEY_BYTES)));
  rows.push(measure(label, 'prefixKeys (reused keys)', keys));
  rows.push(measure(label, 'prefixKeys (fresh keys)', () => prefixKeys('llama-3-8b', undefined, 'chat', prefix, truncated)));
  rows.push(measure(label, 'both (as a request pays)', () => {
    const c = canonicalPrefix(body, span, PREFIX_KEY_BYTES) as { bytes: Buffer; truncated: boolean };
    return prefixKeys('llama-3-8b', undefined, 'chat', c.bytes, c.truncated, into);
  }));
  rows.push(measure(label, 'baseline: sha1 block chain', () => sha1Chain(prefix)));
  rows.push(measure(label, 'baseline: JSON.parse body', () => JSON.parse(body.toString('utf8')) as unknown));
}

console.log(`${ITERATIONS} calls each after ${WARMUP} warm-up, node ${process.version}; allocation per call: median of 9 batches of ${BATCH}`);
const header = ['body', 'step', 'p50 µs', 'p99 µs', 'heap B/call', 'ArrayBuffer B/call'];
console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${r.body} | ${r.step} | ${r.p50Us} | ${r.p99Us} | ${r.heapBytes} | ${r.arrayBufferBytes} |`);
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify({ iterations: ITERATIONS, node: process.version, rows }, null, 2)}\n`);
const both32 = rows.find((r) => r.body.startsWith('32 KB') && r.step.startsWith('both'));
if (both32 === undefined || both32.p50Us >= BUDGET_US) {
  console.error(`FAIL: canonical prefix + keys at 32 KB: p50 ${both32?.p50Us} µs is not under ${BUDGET_US} µs`);
  process.exitCode = 1;
}

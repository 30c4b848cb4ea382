/**
 * Micro-benchmark of the vLLM `/metrics` scanner on a realistic 200 KB body.
 *
 *   node loadtest/scenarios/micro/scanner-bench.ts [--json out.json]
 *
 * Times each scan on its own (process.hrtime.bigint) after a warm-up, checks
 * every result so it cannot time a no-op, and compares against the obvious
 * split-and-regex parser measured in the same run. Exits 1 when the scanner's
 * p50 reaches 1 ms, the budget that lets one router core scrape hundreds of
 * pods several times a second.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { scanEngineMetrics, type ScanResult } from '../../../router/load/exposition-scanner.ts';
import { REALISTIC_EXPECTED, REALISTIC_MODEL, realisticVllmExposition } from './fixtures.ts';

const ITERATIONS = 2000;
const WARMUP = 500;
const BUDGET_NS = 1_000_000;

interface Row {
  name: string;
  bytes: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
  mbPerS: number;
}

/** The baseline: what one writes first. Same answer on the fixture, none of the care. */
function naiveScan(text: string): ScanResult {
  const models = new Map<string, { waiting: number; running: number; kvCacheUsage: number | undefined }>();
  const re = /^vllm:(num_requests_waiting|num_requests_running|kv_cache_usage_perc)\{(.*)\}\s+(\S+)/;
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (m === null) continue;
    const [, name = '', labels = '', raw = ''] = m;
    const model = /model_name="((?:[^"\\]|\\.)*)"/.exec(labels)?.[1] ?? '';
    const g = models.get(model) ?? { waiting: 0, running: 0, kvCacheUsage: undefined };
    models.set(model, g);
    const v = Number(raw);
    if (name === 'num_requests_waiting') g.waiting += v;
    else if (name === 'num_requests_running') g.running += v;
    else g.kvCacheUsage = Math.max(g.kvCacheUsage ?? 0, v);
  }
  return { ok: true, dialect: 'vllm', models };
}

function check(result: ScanResult): void {
  assert.ok(result.ok, result.ok ? '' : result.error);
  assert.equal(result.models.size, 1);
  assert.deepEqual(result.models.get(REALISTIC_MODEL), { ...REALISTIC_EXPECTED });
}

function measure(name: string, scan: (text: string) => ScanResult, text: string): Row {
  for (let i = 0; i < WARMUP; i++) check(scan(text));
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    const result = scan(text);
    samples[i] = Number(process.hrtime.bigint() - start);
    check(result); // outside the timed region, but every result is used
  }
  samples.sort();
  const at = (q: number): number => samples[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))] ?? Number.NaN;
  const meanNs = samples.reduce((a, b) => a + b, 0) / ITERATIONS;
  const round = (v: number): number => Math.round(v * 10) / 10;
  return { name, bytes: text.length, p50Us: round(at(0.5) / 1e3), p99Us: round(at(0.99) / 1e3), meanUs: round(meanNs / 1e3), mbPerS: round(text.length / meanNs * 1e3) };
}

const { values } = parseArgs({ options: { json: { type: 'string' } } });
const text = realisticVllmExposition(200_000);
const rows = [measure('scanEngineMetrics', scanEngineMetrics, text), measure('baseline: split + regex', naiveScan, text)];
console.log(`${ITERATIONS} scans each after ${WARMUP} warm-up, node ${process.version}`);
console.table(rows.map((r) => ({ name: r.name, bytes: r.bytes, 'p50 µs': r.p50Us, 'p99 µs': r.p99Us, 'mean µs': r.meanUs, 'MB/s': r.mbPerS })));
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify({ iterations: ITERATIONS, node: process.version, rows }, null, 2)}\n`);
const scanner = rows[0];
if (scanner === undefined || scanner.p50Us * 1e3 >= BUDGET_NS) {
  console.error(`FAIL: scanner p50 ${scanner?.p50Us} µs is not under ${BUDGET_NS / 1e3} µs`);
  process.exitCode = 1;
}

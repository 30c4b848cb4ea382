/**
 * What one request body costs the main thread before routing: the bounded
 * body scanner (as the traffic listener runs it, in 64 KiB chunks) against
 * `JSON.parse` of the same bytes measured in the same run, on legitimate
 * prompts and on the hostile bodies that once stalled the event loop for
 * seconds (32 MiB deeply nested, 32 MiB of tiny arrays, a multipart body
 * whose tiny boundary repeats throughout).
 *
 *   node --expose-gc loadtest/scenarios/micro/body-scan-bench.ts [--repeat 3]
 *
 * Prints CPU ms and heap growth per body (median of the repeats) and the
 * longest single chunk's scan time, which bounds how long one body can hold
 * the event loop at a time.
 */
import { parseArgs } from 'node:util';
import { SwitchyardError } from '../../../router/errors/errors.ts';
import { JsonBodyScanner } from '../../../router/request/json-body-scanner.ts';
import { multipartBodyFacts } from '../../../router/request/routing-facts.ts';
import { deeplyNestedBody, manySmallArraysBody, tinyBoundaryMultipartBody } from '../../../tests/kit/hostile-bodies.ts';

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '3' } } });
const REPEAT = Number(values.repeat);
const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;
const SIZE = 32 * MiB - 1024;
const LIMITS = { maxDepth: 128, promptPrefixBytes: 4096 };

function promptBody(bytes: number): Buffer {
  const content = 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(bytes / 45)).slice(0, bytes);
  return Buffer.from(JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content }] }));
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

interface Sample {
  cpuMs: number;
  heapMiB: number;
  maxChunkMs: number;
  outcome: string;
}

function measure(run: () => { outcome: string; maxChunkMs: number }): Sample {
  gc();
  const heap = process.memoryUsage().heapUsed;
  const cpu = process.cpuUsage();
  let result: { outcome: string; maxChunkMs: number };
  try {
    result = run();
  } catch (err) {
    result = { outcome: err instanceof SwitchyardError ? err.code : String(err), maxChunkMs: NaN };
  }
  const used = process.cpuUsage(cpu);
  const heapMiB = (process.memoryUsage().heapUsed - heap) / MiB;
  return { cpuMs: (used.user + used.system) / 1000, heapMiB, ...result };
}

function scanInChunks(body: Buffer): { outcome: string; maxChunkMs: number } {
  const scanner = new JsonBodyScanner(LIMITS);
  let maxChunkMs = 0;
  try {
    for (let at = 0; at < body.length; at += CHUNK) {
      const started = performance.now();
      scanner.push(body.subarray(at, at + CHUNK));
      maxChunkMs = Math.max(maxChunkMs, performance.now() - started);
    }
    const facts = scanner.finish(body);
    return { outcome: `model ${facts.model}`, maxChunkMs };
  } catch (err) {
    return { outcome: err instanceof SwitchyardError ? err.code : String(err), maxChunkMs };
  }
}

function parseWhole(body: Buffer): { outcome: string; maxChunkMs: number } {
  const started = performance.now();
  const parsed = JSON.parse(body.toString('utf8')) as { model: string };
  return { outcome: `model ${parsed.model}`, maxChunkMs: performance.now() - started };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const rows: string[][] = [];
function row(name: string, bytes: number, method: string, run: () => { outcome: string; maxChunkMs: number }) {
  const samples = Array.from({ length: REPEAT }, () => measure(run));
  rows.push([
    name,
    (bytes / MiB).toFixed(2),
    method,
    median(samples.map((s) => s.cpuMs)).toFixed(1),
    median(samples.map((s) => s.heapMiB)).toFixed(0),
    median(samples.map((s) => s.maxChunkMs)).toFixed(2),
    samples[0]?.outcome ?? '',
  ]);
}

const bodies: [string, Buffer][] = [
  ['prompt 4 KB', promptBody(4_000)],
  ['prompt 200 KB', promptBody(200_000)],
  ['prompt 8 MB', promptBody(8_000_000)],
  ['nested 32 MiB', deeplyNestedBody(SIZE)],
  ['depth 3, 32 MiB', manySmallArraysBody(SIZE)],
];
// Warm the scanner and JSON.parse up on every body first: the router scans thousands of bodies a second.
for (let round = 0; round < 2; round++) for (const [, body] of bodies) scanInChunks(body);
for (const [name, body] of bodies) {
  row(name, body.length, 'scanner', () => scanInChunks(body));
  row(name, body.length, 'JSON.parse', () => parseWhole(body));
}
const multipart = tinyBoundaryMultipartBody(SIZE);
row('multipart, boundary "a" x 6.7M', multipart.length, 'multipart', () => {
  const started = performance.now();
  const facts = multipartBodyFacts(multipart, 'multipart/form-data; boundary=a');
  return { outcome: `model ${String(facts.model)}`, maxChunkMs: performance.now() - started };
});

const header = ['body', 'MiB', 'method', 'CPU ms', 'heap MiB', 'longest slice ms', 'outcome'];
console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);

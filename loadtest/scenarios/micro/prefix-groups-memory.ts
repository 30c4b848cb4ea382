/**
 * Memory of the prefix group table (router/request/prefix-groups.ts) under a
 * flood of distinct conversations: peer routers' prefix indexes grew
 * without bound (a trie past 16 GB), this one must stay at `maxGroups`.
 *
 *   node --expose-gc loadtest/scenarios/micro/prefix-groups-memory.ts [--conversations 10000000] [--json out.json]
 *
 * Records one request for each of N distinct conversations (each its own
 * group, with 64 block hashes: the largest entry) and prints, at powers of
 * ten, the groups held, the memory (JS heap + ArrayBuffers) above the
 * empty-table baseline measured in the same run (after a full GC), bytes per group, the table's own estimate,
 * and the mean cost of a record. Then the same for `--models` models at once
 * (default 16), and a flood of distinct model names. Exits 1 when the table
 * holds more than maxGroups per model or the heap grows after the table is full.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { PREFIX_GROUP_DEFAULTS, PrefixGroups, type GroupKeys } from '../../../router/request/prefix-groups.ts';

const { values } = parseArgs({ options: { conversations: { type: 'string', default: '10000000' }, models: { type: 'string', default: '16' }, json: { type: 'string' } } });
const CONVERSATIONS = Number(values.conversations);
const MODELS = Number(values.models);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with --expose-gc: heap figures need a full GC before each reading');
  process.exit(2);
}
const MiB = 1024 * 1024;
// V8 drops the bytecode of start-up code (~4 MiB) after it goes unused for a while, which
// would show up mid-run as the table shrinking: keep it, so the baseline holds.
v8.setFlagsFromString('--no-flush-bytecode');

/**
 * JS heap plus ArrayBuffer backing stores (the table's typed arrays live
 * there), after full GCs: backing stores are freed by a concurrent sweeper,
 * so the loop lets it run before reading.
 */
async function heapUsed(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** Keys of conversation `i`: its own group, 64 blocks. Filled in place: the loop allocates nothing. */
const keys: GroupKeys & { group: number; historyTokens: number } = { group: 0, historyTokens: 0, blockCount: 64, blocks: new Uint32Array(64) };
function conversation(i: number): GroupKeys {
  keys.group = Math.imul(i, 0x9e3779b1) >>> 0;
  for (let b = 0; b < 64; b++) keys.blocks[b] = Math.imul(i + b, 0x85ebca77);
  keys.historyTokens = (i % 7) * 512;
  return keys;
}

interface Row {
  scenario: string;
  recorded: number;
  models: number;
  groups: number;
  heapMiB: number;
  bytesPerGroup: number;
  estimateMiB: number;
  nsPerRecord: number;
}

const rows: Row[] = [];
let failed = false;

async function run(scenario: string, total: number, modelOf: (i: number) => string): Promise<void> {
  const baseline = await heapUsed();
  const table = new PrefixGroups();
  let done = 0;
  let fullHeap: number | undefined;
  for (let checkpoint = 1_000; done < total; checkpoint = Math.min(total, checkpoint * 10)) {
    const started = process.hrtime.bigint();
    for (; done < checkpoint; done++) table.record(modelOf(done), conversation(done), done);
    const ns = Number(process.hrtime.bigint() - started) / (checkpoint - (checkpoint === 1_000 ? 0 : checkpoint / 10));
    const heap = (await heapUsed()) - baseline;
    const stats = table.stats();
    rows.push({
      scenario,
      recorded: done,
      models: stats.models,
      groups: stats.groups,
      heapMiB: Math.round((heap / MiB) * 100) / 100,
      bytesPerGroup: Math.round(heap / Math.max(1, stats.groups)),
      estimateMiB: Math.round((stats.approxBytes / MiB) * 100) / 100,
      nsPerRecord: Math.round(ns),
    });
    if (stats.groups > stats.models * PREFIX_GROUP_DEFAULTS.maxGroups) failed = true;
    // Once every model's table is full, more conversations must not grow the heap (10% + 64 KiB of slack for GC noise).
    if (stats.groups === stats.models * PREFIX_GROUP_DEFAULTS.maxGroups) {
      if (fullHeap === undefined) fullHeap = heap;
      else if (heap > fullHeap * 1.1 + 65_536) failed = true;
    }
  }
}

// Warm-up on a table thrown away, so the first rows time optimised code.
{
  const warm = new PrefixGroups();
  for (let i = 0; i < 200_000; i++) warm.record(i % 3 === 0 ? `warm-${i}` : 'llama', conversation(i), i);
}
await run('one model', CONVERSATIONS, () => 'llama');
await run(`${MODELS} models`, Math.min(CONVERSATIONS, 1_000_000), (i) => `model-${i % MODELS}`);
await run('a new model name per request', Math.min(CONVERSATIONS, 100_000), (i) => `junk-${i}`);

console.log(`node ${process.version}; maxGroups ${PREFIX_GROUP_DEFAULTS.maxGroups} per model, maxModels ${PREFIX_GROUP_DEFAULTS.maxModels}; JS heap + ArrayBuffers above the empty-table baseline, after a full GC`);
const header = ['scenario', 'recorded', 'models', 'groups', 'heap + buffers MiB', 'B/group', 'estimate MiB', 'ns/record'];
console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${r.scenario} | ${r.recorded} | ${r.models} | ${r.groups} | ${r.heapMiB} | ${r.bytesPerGroup} | ${r.estimateMiB} | ${r.nsPerRecord} |`);
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify({ node: process.version, settings: PREFIX_GROUP_DEFAULTS, rows }, null, 2)}\n`);
if (failed) {
  console.error('FAIL: the table held more than maxGroups per model, or its heap grew after it was full');
  process.exitCode = 1;
}

/**
 * Where a V8 CPU profile (`node --cpu-prof`) spent its time: self time per
 * function and per file, as a share of the whole. The flame graph is one
 * `speedscope FILE` or DevTools away; this is the version a report can quote.
 *
 *   node loadtest/report/profile-summary.ts FILE.cpuprofile [--top N]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

/** A `.cpuprofile` document, the parts read here. */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Self time (µs) by `function file:line` and by file, and the total. */
export function selfTimes(profile: CpuProfile): { total: number; byFunction: Map<string, number>; byFile: Map<string, number> } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)?.callFrame;
    const micros = profile.timeDeltas[i] ?? 0;
    total += micros;
    if (frame === undefined) return;
    // Paths relative to the checkout or node_modules, so the table reads the same everywhere.
    const file = frame.url === '' ? '(native or idle)' : frame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(router|discovery|loadtest)\//, '$1/');
    const name = `${frame.functionName === '' ? '(anonymous)' : frame.functionName} ${file}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    byFile.set(file, (byFile.get(file) ?? 0) + micros);
  });
  return { total, byFunction, byFile };
}

function top(map: Map<string, number>, total: number, count: number): string {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => `${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`)
    .join('\n');
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
  const file = positionals[0];
  if (file === undefined) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--top N]');
  const { total, byFunction, byFile } = selfTimes(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const count = Number(values.top);
  console.log(`${(total / 1000).toFixed(0)} ms sampled\n\nSelf time by function:\n${top(byFunction, total, count)}\n\nSelf time by file:\n${top(byFile, total, count)}`);
}

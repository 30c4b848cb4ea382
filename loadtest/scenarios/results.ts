/**
 * What every harness scenario shares: its command-line options, the bars it
 * checks with their measured values, number formatting, and writing results
 * (JSON, Markdown, SVG charts) where `bench all` finds them to regenerate
 * docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeChart } from '../report/svg-chart.ts';
import type { Measurement } from './measure.ts';

/** Where results go unless `--out` says otherwise. */
export const DEFAULT_OUT = fileURLToPath(new URL('../results', import.meta.url));

/** Options every scenario takes. */
export interface CommonOptions {
  /** Shorter runs that still show the shape (minutes, not tens of minutes). */
  readonly quick: boolean;
  /** CI: seconds-long runs; only correctness decides the exit code, since speed on a shared CI machine proves nothing. */
  readonly smoke: boolean;
  readonly out: string;
  /** No live progress line. */
  readonly quiet: boolean;
  /** Load-generator processes (0: the scenario's default). */
  readonly generators: number;
}

/** Parses the common flags plus `extra` string flags (returned by name). */
export function scenarioOptions(argv: readonly string[], extra: readonly string[] = []): CommonOptions & { readonly extra: Record<string, string | undefined> } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      out: { type: 'string' },
      generators: { type: 'string' },
      ...Object.fromEntries(extra.map((name) => [name, { type: 'string' as const }])),
    },
  });
  const smoke = values.smoke === true;
  return {
    quick: values.quick === true || smoke,
    smoke,
    out: typeof values.out === 'string' ? values.out : DEFAULT_OUT,
    quiet: values.quiet === true || smoke,
    generators: Number(values.generators ?? 0),
    extra: Object.fromEntries(extra.map((name) => [name, (values as Record<string, unknown>)[name] as string | undefined])),
  };
}

/** One performance or correctness bar and how the run measured against it. */
export interface Bar {
  readonly name: string;
  readonly measured: string;
  readonly pass: boolean;
  /** Correctness bars decide smoke runs too; performance bars (speed, memory, routing quality) only full and quick runs. */
  readonly kind: 'correctness' | 'performance';
}

/** Collects a scenario's bars and turns them into a verdict. */
export class Bars {
  readonly list: Bar[] = [];

  check(kind: Bar['kind'], name: string, pass: boolean, measured: string): void {
    this.list.push({ kind, name, pass, measured });
  }

  /** PASS when every bar that counts in this mode passed. */
  pass(smoke: boolean): boolean {
    return this.list.every((bar) => bar.pass || (smoke && bar.kind === 'performance'));
  }

  markdown(smoke: boolean): string {
    const rows = this.list.map((bar) => `| ${bar.name} | ${bar.measured} | ${bar.pass ? 'pass' : smoke && bar.kind === 'performance' ? 'miss (not judged in smoke runs)' : '**FAIL**'} |`);
    return ['| bar | measured | result |', '|---|---|---|', ...rows, '', `Verdict: **${this.pass(smoke) ? 'PASS' : 'FAIL'}**${smoke ? ' (smoke run: correctness bars only)' : ''}`].join('\n');
  }
}

/**
 * The rows of a results Markdown (`Bars.markdown`) whose bar failed, as `name: measured`, so a
 * run of every scenario can say at its end why one failed (CI logs keep only their tail).
 */
export function failedBars(markdown: string): string[] {
  return [...markdown.matchAll(/^\| (.+) \| (.*) \| \*\*FAIL\*\* \|$/gm)].map((row) => `${row[1] as string}: ${row[2] as string}`);
}

/** The median of a non-empty list of runs' figures, and their range: how every comparison of repeated runs is reported. */
export function medianOf(values: readonly number[]): { median: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)] as number, min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

/** Milliseconds for tables: one decimal below 100, whole above; `-` for NaN. */
export const ms = (n: number): string => (Number.isNaN(n) ? '-' : n >= 100 ? n.toFixed(0) : n.toFixed(1));
/** A difference in milliseconds with its sign. */
export const signedMs = (n: number): string => (Number.isNaN(n) ? '-' : `${n >= 0 ? '+' : '−'}${ms(Math.abs(n))}`);
/** A ratio with two decimals. */
export const ratio = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '-');
/** A share as a whole percentage. */
export const pct = (n: number): string => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : '-');

/** A measurement without its histograms (their percentiles are already in it), for the JSON results. */
export function withoutHistograms(m: Measurement): Omit<Measurement, 'run'> & { run: Omit<Measurement['run'], 'e2e' | 'ttft' | 'itl' | 'sendLag'> } {
  const { e2e: _e2e, ttft: _ttft, itl: _itl, sendLag: _sendLag, ...run } = m.run;
  return { ...m, run };
}

/** Where and how the run happened. */
export interface RunFacts {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly commit: string;
  readonly date: string;
  readonly command: string;
}

/** Facts of this machine and checkout. */
export function runFacts(command: string): RunFacts {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    // Numbers from uncommitted code must say so.
    if (execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '') commit += ' (working tree modified)';
  } catch {
    // not a git checkout: the report still stands, just without a commit
  }
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, commit, date: new Date().toISOString(), command };
}

/** The machine-facts header line every report starts with. */
export function factsLine(facts: RunFacts): string {
  return `Machine: ${facts.cpu} × ${facts.cores} cores, ${facts.memoryGiB} GiB, Node ${facts.node}, commit ${facts.commit}, ${facts.date}\nCommand: \`${facts.command}\``;
}

/** A chart to write next to the results. */
export interface Chart {
  /** File name stem, e.g. `latency-vs-load`. */
  readonly name: string;
  readonly svg: string;
}

/**
 * Writes `<scenario>-<stamp>.json` and `.md`, plus `<scenario>-latest.md`
 * and `<scenario>-<chart>.svg` (stable names `bench all` collects), and
 * prints the Markdown.
 */
export function writeResults(out: string, scenario: string, facts: RunFacts, data: unknown, markdown: string, charts: readonly Chart[] = []): void {
  mkdirSync(out, { recursive: true });
  const stamp = facts.date.replace(/[:.]/g, '-');
  writeFileSync(join(out, `${scenario}-${stamp}.json`), JSON.stringify({ facts, ...(data as object) }, null, 2));
  writeFileSync(join(out, `${scenario}-${stamp}.md`), `${markdown}\n`);
  writeFileSync(join(out, `${scenario}-latest.md`), `${markdown}\n`);
  for (const chart of charts) writeChart(join(out, `${scenario}-${chart.name}.svg`), chart.svg);
  console.log(markdown);
}

/** Runs a scenario's entry point when its file is executed directly. */
export function runIfMain(moduleUrl: string, entry: (argv: readonly string[]) => Promise<number>): void {
  if (process.argv[1] !== fileURLToPath(moduleUrl)) return;
  entry(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}

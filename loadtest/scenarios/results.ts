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
import { writeChart } from '../report/svg-chart.ts';
import type { Measurement } from './measure.ts';
import { scenarioEntry, type OptionName, type ScenarioName } from './registry.ts';
import { exitCodeOf, parseScenarioArgs } from './scenario-args.ts';

/** Where results go unless `--out` says otherwise. */
export const DEFAULT_OUT = fileURLToPath(new URL('../results', import.meta.url));

/** Options every scenario takes. */
export interface CommonOptions {
  /** Shorter runs that still show the shape (minutes, not tens of minutes): indicative only, as their reports say ({@link runModeNote}). */
  readonly quick: boolean;
  /** CI: seconds-long runs; only correctness decides the exit code, since speed on a shared CI machine proves nothing. */
  readonly smoke: boolean;
  readonly out: string;
  /** No live progress line. */
  readonly quiet: boolean;
  /** Load-generator processes (0: the scenario's default). */
  readonly generators: number;
}

/** How long a run was asked to be, which decides which bars it judges and what its report says about itself. */
export type RunMode = Pick<CommonOptions, 'quick' | 'smoke'>;

/** The common options and scenario `N`'s own, by name (undefined: not given). */
export type ScenarioOptions<N extends ScenarioName> = CommonOptions & { readonly extra: Readonly<Record<OptionName<N>, string | undefined>> };

/**
 * Parses scenario `name`'s command line against its option list in
 * registry.ts, the list its `--help` shows. Throws `ScenarioUsage` for
 * `--help` and for an option the list lacks, so a scenario calls this before
 * it starts anything.
 */
export function scenarioOptions<N extends ScenarioName>(argv: readonly string[], name: N): ScenarioOptions<N> {
  const values = parseScenarioArgs(name, argv);
  const text = (option: string) => {
    const value = values.get(option);
    return typeof value === 'string' ? value : undefined;
  };
  const smoke = values.get('smoke') === true;
  return {
    quick: values.get('quick') === true || smoke,
    smoke,
    out: text('out') ?? DEFAULT_OUT,
    quiet: values.get('quiet') === true || smoke,
    generators: Number(text('generators') ?? 0),
    extra: Object.fromEntries(scenarioEntry(name).options.map((option) => [option.name, text(option.name)])) as Record<OptionName<N>, string | undefined>,
  };
}

/** One bar and how the run measured against it. */
export interface Bar {
  readonly name: string;
  readonly measured: string;
  /** Met; also true for a bar that did not apply (`applies` false), which no verdict fails on. */
  readonly pass: boolean;
  /**
   * Which runs judge it. Correctness bars: every run. Performance bars (speed, memory, routing
   * quality): full and quick runs. Comparison bars, which rank policies against each other on the
   * same arrivals: full runs only, since a quick run's few seconds leave the tail to a handful of
   * requests and the ranking to chance.
   */
  readonly kind: 'correctness' | 'performance' | 'comparison';
  /** False when the run's settings left it nothing to measure: reported as n/a. */
  readonly applies?: false;
}

/** Whether `bar` decides the verdict of a run in `mode`. */
function judged(bar: Bar, mode: RunMode): boolean {
  if (bar.kind === 'correctness') return true;
  if (bar.kind === 'performance') return !mode.smoke;
  return !mode.quick && !mode.smoke;
}

/** The result cell of `bar` in a run in `mode`. */
function resultCell(bar: Bar, mode: RunMode): string {
  if (bar.applies === false) return 'n/a';
  if (bar.pass) return 'pass';
  return judged(bar, mode) ? '**FAIL**' : `miss (not judged in ${mode.smoke ? 'smoke' : 'quick'} runs)`;
}

/** Collects a scenario's bars and turns them into a verdict. */
export class Bars {
  readonly list: Bar[] = [];

  check(kind: Bar['kind'], name: string, pass: boolean, measured: string): void {
    this.list.push({ kind, name, pass, measured });
  }

  /** A bar the run's settings leave nothing to measure (`why`), reported as n/a rather than failed. */
  notApplicable(kind: Bar['kind'], name: string, why: string): void {
    this.list.push({ kind, name, pass: true, measured: why, applies: false });
  }

  /** PASS when every bar that counts in this mode passed. */
  pass(mode: RunMode): boolean {
    return this.list.every((bar) => bar.pass || !judged(bar, mode));
  }

  /** The bars as a Markdown table, then the verdict line, saying which bars a short run left unjudged. */
  markdown(mode: RunMode): string {
    const rows = this.list.map((bar) => `| ${bar.name} | ${bar.measured} | ${resultCell(bar, mode)} |`);
    const unjudged = mode.smoke ? ' (smoke run: correctness bars only)' : mode.quick && this.list.some((bar) => bar.kind === 'comparison') ? ' (quick run: comparison bars not judged)' : '';
    return ['| bar | measured | result |', '|---|---|---|', ...rows, '', `Verdict: **${this.pass(mode) ? 'PASS' : 'FAIL'}**${unjudged}`].join('\n');
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

/** Where results go and how long the run was asked to be (every scenario's options). */
export type ResultsTarget = Pick<CommonOptions, 'out'> & RunMode;

/**
 * What a short run's report says about itself first, so nobody reads its
 * figures as a full run's; undefined for a full run.
 */
export function runModeNote(mode: RunMode): string | undefined {
  if (mode.smoke) return '**Smoke run: correctness only.** Seconds long, it checks that the scenario works end to end; its figures compare nothing and judge no speed.';
  if (mode.quick) return '**Quick run: indicative only.** It is too short to compare policies or judge the speed bars reliably; run without `--quick` for figures to rely on.';
  return undefined;
}

/**
 * Writes `<scenario>-<stamp>.json` and `.md`, plus `<scenario>-latest.md`
 * and `<scenario>-<chart>.svg` (stable names `bench all` collects), and
 * prints the Markdown, headed by {@link runModeNote} for a quick or smoke run.
 */
export function writeResults(target: ResultsTarget, scenario: string, facts: RunFacts, data: unknown, markdown: string, charts: readonly Chart[] = []): void {
  const { out } = target;
  const note = runModeNote(target);
  const report = note === undefined ? markdown : `${note}\n\n${markdown}`;
  mkdirSync(out, { recursive: true });
  const stamp = facts.date.replace(/[:.]/g, '-');
  writeFileSync(join(out, `${scenario}-${stamp}.json`), JSON.stringify({ facts, ...(data as object) }, null, 2));
  writeFileSync(join(out, `${scenario}-${stamp}.md`), `${report}\n`);
  writeFileSync(join(out, `${scenario}-latest.md`), `${report}\n`);
  for (const chart of charts) writeChart(join(out, `${scenario}-${chart.name}.svg`), chart.svg);
  console.log(report);
}

/** Runs a scenario's entry point when its file is executed directly; help and bad arguments exit as through `npm run bench`. */
export function runIfMain(moduleUrl: string, entry: (argv: readonly string[]) => Promise<number>): void {
  if (process.argv[1] !== fileURLToPath(moduleUrl)) return;
  entry(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => (process.exitCode = exitCodeOf(err)),
  );
}

/**
 * `npm run bench -- <scenario>` / `npm run bench -- <scenario>`: runs one
 * harness scenario, or `all` of them. Every scenario measures its baselines
 * in the same run, prints a Markdown report with a pass/fail verdict, and
 * writes JSON, Markdown and SVG charts under loadtest/results/.
 * `all --docs` regenerates docs/benchmarks.md and its charts from the run.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMON_OPTIONS, SCENARIOS } from './registry.ts';
import { DEFAULT_OUT, failedBars } from './results.ts';
import { exitCodeOf, parseArgv, usageError, type OptionValues } from './scenario-args.ts';

const USAGE = `Usage: npm run bench -- <scenario> [--quick | --smoke] [--quiet] [--out DIR] [--generators N] [scenario options]
       npm run bench -- <scenario> --help    (what it does, its bars and its options)
       npm run bench -- all [--quick | --smoke] [--docs]
       npm run bench -- docs DIR    (docs/benchmarks.md from the results in DIR)

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(20)} ${s.title}`).join('\n')}
  ${'all'.padEnd(20)} every scenario in turn; --docs regenerates docs/benchmarks.md from the run

--quick runs shorter versions (minutes), indicative only; --smoke runs seconds-long
versions that judge correctness only (CI). Results: JSON, Markdown and SVG charts
in --out (default loadtest/results/).
`;

/** What `all` takes: the common options, passed to every scenario, and `--docs`. */
const ALL_OPTIONS = [...COMMON_OPTIONS, { name: 'docs', description: 'regenerate docs/benchmarks.md and its charts from the run' }];

const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

/** Runs every scenario into one folder; with `--docs`, rewrites docs/benchmarks.md from it. `values`: `argv` parsed against {@link ALL_OPTIONS}. */
async function runAll(argv: readonly string[], values: OptionValues): Promise<number> {
  const docs = values.get('docs') === true;
  const passThrough = argv.filter((a) => a !== '--docs');
  const given = values.get('out');
  const out = typeof given === 'string' ? given : join(DEFAULT_OUT, `all-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const args = typeof given === 'string' ? passThrough : [...passThrough, '--out', out];
  const outcomes: { name: string; code: number; seconds: number; startedAt: number }[] = [];
  for (const scenario of SCENARIOS) {
    console.error(`\n== ${scenario.name}`);
    const startedAt = Date.now();
    let code: number;
    try {
      code = await scenario.run(args);
    } catch (err) {
      code = exitCodeOf(err);
    }
    outcomes.push({ name: scenario.name, code, seconds: (Date.now() - startedAt) / 1000, startedAt });
  }
  console.error(`\n${outcomes.map((o) => `${o.name}: ${o.code === 0 ? 'PASS' : 'FAIL'} (${o.seconds.toFixed(0)} s)${o.code === 0 ? '' : failedBarsOf(out, o.name, o.startedAt)}`).join('\n')}`);
  if (docs) writeDocs(out, passThrough.filter((a, i) => a !== '--out' && !a.startsWith('--out=') && passThrough[i - 1] !== '--out'), outcomes);
  return outcomes.every((o) => o.code === 0) ? 0 : 1;
}

/** A failed scenario's failed bars, one indented line each, read back from the results it wrote to `out` since `since` (epoch ms). */
function failedBarsOf(out: string, scenario: string, since: number): string {
  const file = join(out, `${scenario}-latest.md`);
  if (!existsSync(file) || statSync(file).mtimeMs < since) return '\n  (it wrote no results: its error is above)';
  return failedBars(readFileSync(file, 'utf8')).map((bar) => `\n  failed: ${bar}`).join('');
}

/** Outcome of one scenario run, as `all` saw it. */
interface Outcome {
  readonly name: string;
  readonly code: number;
  /** Undefined when read back from a results folder. */
  readonly seconds: number | undefined;
}

/**
 * docs/benchmarks.md and docs/benchmarks/*.svg from the results in `out`
 * (`all --docs`, or `docs DIR` after rerunning one scenario into DIR).
 */
function writeDocs(out: string, args: readonly string[], outcomes: readonly Outcome[]): void {
  const charts = join(DOCS, 'benchmarks');
  mkdirSync(charts, { recursive: true });
  const files = readdirSync(out);
  const previous = previousSections();
  const rerun = (name: string) => outcomes.some((o) => o.name === name);
  const partial = outcomes.length < SCENARIOS.length;
  const sections = SCENARIOS.flatMap((scenario) => {
    const kept = previous.get(`## ${scenario.title}`);
    // `docs DIR` after rerunning some scenarios: the others keep the section of their last run (or stay out).
    if (partial && !rerun(scenario.name)) return kept === undefined ? [] : [kept];
    const latest = files.includes(`${scenario.name}-latest.md`) ? readFileSync(join(out, `${scenario.name}-latest.md`), 'utf8').trim() : '_No result: the scenario did not finish._';
    const svgs = files.filter((f) => f.startsWith(`${scenario.name}-`) && f.endsWith('.svg')).sort();
    for (const svg of svgs) copyFileSync(join(out, svg), join(charts, svg));
    const outcome = outcomes.find((o) => o.name === scenario.name);
    const section = [
      `## ${scenario.title}`,
      '',
      `\`npm run bench -- ${scenario.name}\`${outcome === undefined ? '' : ` (${outcome.code === 0 ? 'PASS' : 'FAIL'}${outcome.seconds === undefined ? '' : `, ${outcome.seconds.toFixed(0)} s`})`}`,
      '',
      scenario.about,
      '',
      latest.replace(/^#{1,3} /gm, '#### '),
      ...svgs.map((svg) => `\n![${svg}](benchmarks/${svg})`),
    ].join('\n');
    return [section];
  });
  const text = [
    '# Benchmarks',
    '',
    ...summary(),
    'Generated by `npm run bench -- all --docs` from one run of every scenario in `loadtest/` (do not edit by hand; the reading of these numbers is in [performance.md](performance.md)). Each scenario measures its baselines (the engine directly, nginx, the vLLM project router where it installs) in the same run, on the machine named in its header. Rerun any one with the command under its heading; `--quick` gives a shorter version. Latency is from the scheduled send time in open-loop runs, so a stalled target is charged for the requests it kept waiting; every row says whether the load generator kept up.',
    '',
    runLine(args, outcomes, previous.get('Run:')),
    '',
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
  writeFileSync(join(DOCS, 'benchmarks.md'), text);
  console.error(`wrote ${join(DOCS, 'benchmarks.md')}`);
}

/**
 * What the numbers mean for a deployment, in ten lines: docs/performance.md's "In short", written
 * by hand beside the reading of the numbers and copied here so both pages open with it.
 */
function summary(): string[] {
  const reading = readFileSync(join(DOCS, 'performance.md'), 'utf8');
  const section = /^## In short\n([\s\S]*?)(?=^## )/m.exec(reading)?.[1]?.trim();
  if (section === undefined) return [];
  return ['## In short', '', section, '', 'From [performance.md](performance.md#in-short), which reads these numbers in full.', ''];
}

/** The sections of the current docs/benchmarks.md by their `## title` line (none when it does not exist). */
function previousSections(): Map<string, string> {
  const file = join(DOCS, 'benchmarks.md');
  const sections = new Map<string, string>();
  if (!existsSync(file)) return sections;
  const parts = readFileSync(file, 'utf8').split(/^(?=## )/m).slice(1);
  for (const part of parts) sections.set(part.slice(0, part.indexOf('\n')), part.trimEnd());
  const run = /^Run: .*$/m.exec(readFileSync(file, 'utf8'));
  if (run !== null) sections.set('Run:', run[0]);
  return sections;
}

/** The `Run:` line: the `all` command, or after `docs DIR` the earlier line and which scenarios were rerun since. */
function runLine(args: readonly string[], outcomes: readonly Outcome[], previous: string | undefined): string {
  if (previous === undefined || outcomes.length === SCENARIOS.length) return `Run: \`${['npm run bench -- all', ...args, '--docs'].join(' ')}\``;
  // Sections rerun before this one keep saying so: the line names every scenario rerun since the whole run.
  const rerun = (name: string) => outcomes.some((o) => o.name === name) || previous.includes(`\`npm run bench -- ${name}\``);
  const names = SCENARIOS.map((scenario) => scenario.name).filter(rerun);
  return `${previous.replace(/ Rerun since:.*$/, '')} Rerun since: ${names.map((name) => `\`npm run bench -- ${name}\``).join(', ')} (their sections).`;
}

/** Entry point; returns the exit code. */
export async function bench(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === 'all') return all(rest);
  if (name === 'docs' && rest[0] !== undefined) return docsFrom(rest[0]);
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (scenario === undefined) {
    console.log(USAGE);
    return name === undefined || name === '--help' || name === '-h' ? 0 : 2;
  }
  try {
    return await scenario.run(rest);
  } catch (err) {
    return exitCodeOf(err);
  }
}

/** `all`, its arguments checked once here: every scenario would otherwise refuse a bad one in turn. */
async function all(argv: readonly string[]): Promise<number> {
  const parsed = parseArgv(ALL_OPTIONS, argv);
  switch (parsed.kind) {
    case 'help':
      console.log(USAGE);
      return 0;
    case 'error':
      console.error(usageError('all', parsed.error));
      return 2;
    case 'values':
      return runAll(argv, parsed.values);
  }
}

/** `docs DIR`: docs/benchmarks.md from the results in DIR, after rerunning some scenarios into a folder of an earlier `all` run. */
function docsFrom(dir: string): number {
  const outcomes = SCENARIOS.flatMap((scenario) => {
    const file = join(dir, `${scenario.name}-latest.md`);
    if (!existsSync(file)) return [];
    return [{ name: scenario.name, code: /Verdict: \**PASS/.test(readFileSync(file, 'utf8')) ? 0 : 1, seconds: undefined }];
  });
  writeDocs(dir, [], outcomes);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  bench(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => (process.exitCode = exitCodeOf(err)),
  );
}

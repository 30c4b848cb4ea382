/**
 * `switchyard bench load`: load from this machine against an adopter's own
 * deployment (a switchyard router or any OpenAI-compatible engine), with the
 * benchmarks' generator, checks and chart writer. It parses the options,
 * reads the API key, sends one preflight request, runs the steps, and prints
 * the Markdown report (and with --out writes it with report.json and the
 * charts). The API key is removed from everything printed or written.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readApiKey, redact } from './api-key.ts';
import { loadCharts } from './charts.ts';
import { renderMarkdown } from './markdown.ts';
import { chatPath, loadUsage, parseLoadOptions, stepLabel, UsageError, type LoadOptions } from './options.ts';
import { preflight } from './preflight.ts';
import { runSteps } from './steps.ts';
import { reportSettings, stepReport, type LoadReport } from './summary.ts';

/** What the CLI passes in: its version, and where lines go (tests may capture them). */
export interface CommandContext {
  readonly version: string;
  readonly print?: (text: string) => void;
  readonly printError?: (line: string) => void;
}

/** Writes the report files into `dir`; every text has `secret` removed. Returns the file names. */
function writeReport(dir: string, files: readonly { readonly file: string; readonly text: string }[], secret: string | undefined): string[] {
  mkdirSync(dir, { recursive: true });
  for (const { file, text } of files) writeFileSync(join(dir, file), redact(text, secret));
  return files.map((f) => f.file);
}

/** Runs the command; resolves with the exit code (0 done, 1 nothing succeeded or the run broke, 2 usage or target). */
export async function benchLoad(argv: readonly string[], context: CommandContext): Promise<number> {
  const print = context.print ?? ((text: string) => void process.stdout.write(text));
  const printError = context.printError ?? ((line: string) => console.error(line));
  let options: LoadOptions;
  let secret: string | undefined;
  try {
    const parsed = parseLoadOptions(argv);
    if (parsed.kind === 'help') {
      print(loadUsage());
      return 0;
    }
    options = parsed.options;
    if (options.apiKeyFile !== undefined) {
      const apiKey = readApiKey(options.apiKeyFile);
      secret = apiKey.key;
      if (apiKey.warning !== undefined) printError(`switchyard bench load: ${apiKey.warning}`);
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    printError(`switchyard bench load: ${err.message}`);
    return 2;
  }
  const runId = `load-${randomBytes(3).toString('hex')}`;
  const headers = secret === undefined ? {} : { authorization: `Bearer ${secret}` };
  const origin = options.target.origin;
  const path = chatPath(options.target);
  let idsChecked: boolean;
  try {
    idsChecked = (await preflight(origin, path, options.model, headers, `${runId}-preflight`, secret)).derivesIds;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    printError(`switchyard bench load: ${err.message}`);
    return 2;
  }
  try {
    const steps = await runSteps(options, { runId, origin, path, headers, checkIds: idsChecked }, (load, index) => {
      if (!options.quiet) printError(`step ${index + 1} of ${options.steps.length}: ${stepLabel(load)}, ${options.warmupS} s warm-up then ${options.durationS} s measured`);
    });
    const report: LoadReport = {
      tool: 'switchyard bench load',
      version: context.version,
      generatedAt: new Date().toISOString(),
      target: options.target.href,
      model: options.model,
      settings: reportSettings(options),
      idsChecked,
      steps: steps.map((step) => stepReport(step, options)),
    };
    const charts = options.out === undefined ? [] : loadCharts(report);
    const markdown = renderMarkdown(report, options, charts);
    print(redact(markdown, secret));
    if (options.out !== undefined) {
      const written = writeReport(options.out, [{ file: 'report.md', text: markdown }, { file: 'report.json', text: `${JSON.stringify(report, null, 2)}\n` }, ...charts.map((c) => ({ file: c.file, text: c.svg }))], secret);
      printError(`switchyard bench load: report written to ${options.out} (${written.join(', ')})`);
    }
    return report.steps.some((s) => s.requests.ok > 0) ? 0 : 1;
  } catch (err) {
    // A generator that died (Ctrl-C reaches it too) or a report that could not be written: one line, no stack.
    printError(`switchyard bench load: ${redact((err as Error).message, secret)}`);
    return 1;
  }
}

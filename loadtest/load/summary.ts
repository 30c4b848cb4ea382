/**
 * The report of a `switchyard bench load` run as plain data: what report.json
 * holds and what the Markdown and the charts are rendered from. Numbers in
 * milliseconds, tokens and per-second rates; NaN (null in JSON) where there
 * was nothing to measure, e.g. inter-token latency of non-streamed answers.
 */
import { Histogram, type HistogramSnapshot, type Percentiles } from '../bench/histogram.ts';
import type { FailureExample } from '../bench/load-spec.ts';
import type { GeneratorHealth, GeneratorRun } from '../bench/generators.ts';
import { stepLabel, type LoadOptions, type StepLoad } from './options.ts';
import type { StepRun } from './steps.ts';
import { keptUp } from './verdict.ts';

/** One second of a step, warm-up included. */
export interface SecondRow {
  /** Seconds since the step started. */
  readonly second: number;
  readonly ok: number;
  readonly failed: number;
  readonly outputTokens: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly itlP50Ms: number;
  readonly itlP99Ms: number;
}

/** One step's numbers. */
export interface StepReport {
  readonly label: string;
  readonly load: StepLoad;
  readonly startedAt: string;
  /** Started in the measured window; of those answered well, shed with 429 and Retry-After, failed. */
  readonly requests: { readonly sent: number; readonly ok: number; readonly shed: number; readonly failed: number };
  /** Failures by kind (`status 503`, `corrupt`, `reset`, `timeout`, ...). */
  readonly errors: Readonly<Record<string, number>>;
  readonly failureExamples: readonly FailureExample[];
  /** Answers completed per second during the measured window, and their output tokens per second: what the target delivered (an overloaded one stays below the offered rate). */
  readonly throughput: { readonly requestsPerS: number; readonly outputTokensPerS: number };
  readonly ttftMs: Percentiles;
  readonly itlMs: Percentiles;
  readonly e2eMs: Percentiles;
  readonly tokens: {
    /** Output tokens per answer (usage where reported, else counted). */
    readonly output: Percentiles;
    /** Mean `max_tokens` asked. */
    readonly askedOutputMean: number;
    /** Prompt tokens per answer as the target's usage reported them. */
    readonly prompt: Percentiles;
    /** Mean prompt tokens sent, history included, at ~4 characters a token. */
    readonly sentPromptMean: number;
    /** Answers whose output tokens came from a usage report. */
    readonly fromUsage: number;
  };
  readonly generator: { readonly keptUp: boolean; readonly verdict: string; readonly sendLagP99Ms: number | undefined; readonly processes: readonly GeneratorHealth[] };
  readonly seconds: readonly SecondRow[];
}

/** The whole run. */
export interface LoadReport {
  readonly tool: 'switchyard bench load';
  readonly version: string;
  readonly generatedAt: string;
  readonly target: string;
  readonly model: string;
  /** The options, the API key reduced to whether one was sent. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Whether every answer's id was checked to belong to its request (the target derives ids from x-request-id). */
  readonly idsChecked: boolean;
  readonly steps: readonly StepReport[];
}

const percentiles = (snapshot: HistogramSnapshot): Percentiles => Histogram.of([snapshot]).percentiles();

/**
 * Answers and output tokens per second completed inside the measured window,
 * counted over its whole seconds (the per-second counts are by second since
 * the step started, warm-up first). Counting the window's arrivals instead
 * would report the offered rate for a target that answers them only long
 * after. A window shorter than a whole second falls back to its own answers.
 */
function delivered(run: GeneratorRun, options: LoadOptions): StepReport['throughput'] {
  const from = Math.ceil(options.warmupS);
  const to = Math.floor(options.warmupS + options.durationS);
  if (to <= from) return { requestsPerS: (run.ok * 1000) / run.windowMs, outputTokensPerS: (run.tokens.output.sum * 1000) / run.windowMs };
  let answers = 0;
  let tokens = 0;
  for (let second = from; second < to; second++) {
    answers += run.timeline[second] ?? 0;
    tokens += run.seconds[second]?.outputTokens ?? 0;
  }
  return { requestsPerS: answers / (to - from), outputTokensPerS: tokens / (to - from) };
}

/** One step's numbers from what its generators measured. */
export function stepReport(step: StepRun, options: LoadOptions): StepReport {
  const { run, load } = step;
  const output = Histogram.of([run.tokens.output]);
  const verdict = keptUp(run, load);
  const seconds = Array.from({ length: Math.max(run.timeline.length, run.seconds.length) }, (_, second): SecondRow => {
    const stats = run.seconds[second];
    const ttft = stats === undefined ? undefined : Histogram.of([stats.ttft]);
    const itl = stats === undefined ? undefined : Histogram.of([stats.itl]);
    return {
      second,
      ok: run.timeline[second] ?? 0,
      failed: stats?.failed ?? 0,
      outputTokens: stats?.outputTokens ?? 0,
      ttftP50Ms: ttft?.quantile(0.5) ?? Number.NaN,
      ttftP99Ms: ttft?.quantile(0.99) ?? Number.NaN,
      itlP50Ms: itl?.quantile(0.5) ?? Number.NaN,
      itlP99Ms: itl?.quantile(0.99) ?? Number.NaN,
    };
  });
  return {
    label: stepLabel(load),
    load,
    startedAt: step.startedAt,
    requests: { sent: run.measured, ok: run.ok, shed: run.shed, failed: run.failed },
    errors: run.failureKinds,
    failureExamples: run.failureExamples,
    throughput: delivered(run, options),
    ttftMs: percentiles(run.ttft),
    itlMs: percentiles(run.itl),
    e2eMs: percentiles(run.e2e),
    tokens: {
      output: output.percentiles(),
      askedOutputMean: run.ok === 0 ? Number.NaN : run.tokens.askedOutput / run.ok,
      prompt: percentiles(run.tokens.prompt),
      sentPromptMean: run.ok === 0 ? Number.NaN : run.tokens.askedPrompt / run.ok,
      fromUsage: run.tokens.fromUsage,
    },
    generator: { keptUp: verdict.keptUp, verdict: verdict.line, sendLagP99Ms: verdict.sendLagP99Ms, processes: run.processes },
    seconds,
  };
}

/** The options as the report shows them: everything but the key, which is only said to be sent or not. */
export function reportSettings(options: LoadOptions): Record<string, unknown> {
  const { target, apiKeyFile, ...rest } = options;
  return { ...rest, target: target.href, apiKey: apiKeyFile === undefined ? 'none' : `sent, from ${apiKeyFile}` };
}

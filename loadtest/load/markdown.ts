/**
 * The Markdown report of a `switchyard bench load` run: what was sent, the
 * steps side by side, the generator's verdict, tokens, errors with examples,
 * and the charts when they were written. Rendered from the report data only
 * (summary.ts), so report.md and report.json cannot disagree.
 */
import type { LoadOptions } from './options.ts';
import type { LoadReport, StepReport } from './summary.ts';

/** A number for a table: `–` when there was nothing to measure. */
function n(value: number | undefined, digits = 1): string {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${n(value, value < 10 ? 1 : 0)} ms` : '–';
}

function range(r: { readonly min: number; readonly max: number }): string {
  return r.min === r.max ? `${r.min}` : `${r.min}-${r.max}`;
}

/** What the run sent, in a sentence or two. */
function workload(options: LoadOptions): string {
  const shape = options.steps[0]?.kind === 'rate' ? 'open loop, Poisson arrivals' : 'closed loop, each client sending when its last answer is in';
  const sessions = options.sessions === 0 ? 'no session keys' : `${options.sessions} session keys (x-session-id)${options.turns > 1 ? `, conversations of ${options.turns} turns resending their history` : ''}`;
  return [
    `Load: ${shape}; ${options.durationS} s measured per step after ${options.warmupS} s of warm-up; ${options.stream ? 'streamed' : 'not streamed'}.`,
    `Requests: chat completions of ~${range(options.promptTokens)} new prompt tokens, max_tokens ${range(options.outputTokens)}${options.ignoreEos ? ' with ignore_eos' : ''}; ${sessions}.`,
  ].join('\n');
}

function summaryTable(steps: readonly StepReport[]): string[] {
  return [
    '| step | sent | ok | errors | shed (429) | answered/s | output tokens/s | TTFT p50 | TTFT p99 | ITL p50 | ITL p99 | e2e p50 | e2e p99 | generator kept up |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...steps.map(
      (s) =>
        `| ${s.label} | ${s.requests.sent} | ${s.requests.ok} | ${s.requests.failed} | ${s.requests.shed} | ${n(s.throughput.requestsPerS)} | ${n(s.throughput.outputTokensPerS, 0)} | ${ms(s.ttftMs.p50)} | ${ms(s.ttftMs.p99)} | ${ms(s.itlMs.p50)} | ${ms(s.itlMs.p99)} | ${ms(s.e2eMs.p50)} | ${ms(s.e2eMs.p99)} | ${s.generator.keptUp ? 'yes' : '**NO**'} |`,
    ),
  ];
}

function tokenTable(steps: readonly StepReport[]): string[] {
  return [
    '| step | output tokens per answer (mean / p50 / p99) | max_tokens asked (mean) | prompt tokens per answer, usage (mean) | prompt tokens sent, ~4 chars each (mean) | answers with usage |',
    '|---|---:|---:|---:|---:|---:|',
    ...steps.map((s) => {
      const t = s.tokens;
      return `| ${s.label} | ${n(t.output.mean)} / ${n(t.output.p50, 0)} / ${n(t.output.p99, 0)} | ${n(t.askedOutputMean)} | ${n(t.prompt.mean)} | ${n(t.sentPromptMean)} | ${t.fromUsage} of ${s.requests.ok} |`;
    }),
  ];
}

function errorLines(steps: readonly StepReport[]): string[] {
  const failing = steps.filter((s) => s.requests.failed > 0);
  if (failing.length === 0) return ['None: every answer in every step was well-formed.'];
  return failing.flatMap((s) => [
    `**${s.label}**: ${Object.entries(s.errors).map(([kind, count]) => `${kind} × ${count}`).join(', ')}`,
    '',
    ...s.failureExamples.map((e) => `- \`${e.requestId}\` (status ${e.status}): ${e.problem}${e.bodyHead === '' ? '' : ` — body: \`${e.bodyHead.slice(0, 160).replace(/[`\r\n]+/g, ' ')}\``}`),
    '',
  ]);
}

/** The report as Markdown; `charts` are the SVG files written beside it (none when there is no output directory). */
export function renderMarkdown(report: LoadReport, options: LoadOptions, charts: readonly { readonly file: string; readonly title: string }[]): string {
  const lines = [
    '# switchyard bench load',
    '',
    `Target ${report.target}, model \`${report.model}\`, ${report.generatedAt}, switchyard ${report.version}.`,
    '',
    workload(options),
    '',
    `Checks: every answer is read to its end as a strict OpenAI client reads it (status, JSON, SSE framing, \`[DONE]\`); ${report.idsChecked ? 'each answer\'s id is checked to belong to its own request.' : 'answer ids are not checked against request ids (this target does not derive them from x-request-id).'}`,
    '',
    'Token counts are approximate: prompts are built at ~4 characters a token (no tokenizer); output tokens are the usage the target reports where it does, else one per streamed chunk (~4 characters a token when not streamed).',
    '',
    '## Steps',
    '',
    ...summaryTable(report.steps),
    '',
    'Sent, ok, errors and latencies are of the requests started in the measured window; answered/s and output tokens/s count what was completed during it. TTFT and end-to-end latency count from when each request was due (open loop) or sent (closed loop); ITL is the gap between streamed chunks.',
    '',
    '## Did the generator keep up?',
    '',
    ...report.steps.map((s) => `- ${s.label}: ${s.generator.verdict}`),
    '',
    '## Tokens',
    '',
    ...tokenTable(report.steps),
    '',
    '## Errors',
    '',
    ...errorLines(report.steps),
  ];
  if (charts.length > 0) lines.push('', '## Charts', '', `Per second since each step started; the first ${options.warmupS} s of each are warm-up.`, '', ...charts.map((c) => `![${c.title}](${c.file})`));
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}

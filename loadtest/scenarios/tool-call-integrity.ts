/**
 * `npm run bench -- tool-call-integrity`: the seed report. 200 users send
 * chat requests offering a tool the engine answers with a call whose
 * arguments exceed 1 KiB, half streamed and half not, ramping to ≥ 800
 * requests/s, through one router over two engines that write their bytes in
 * arbitrary splits. Every response is checked: SSE framing, JSON, `[DONE]`,
 * every event carrying its own request's id (no interleaving), and each tool
 * call reassembling into arguments that parse and a function name.
 *
 *   npm run bench -- tool-call-integrity [--quick | --smoke] [--requests N] [--rate N]
 *
 * The issue's bars are for its load: 100,000 checked, 800 requests/s
 * sustained of the 900 offered. A run asked for another load is held to that
 * load: the count it asked for, and the same 8/9 of the rate it asked for.
 */
import type { GeneratorRun } from '../bench/generators.ts';
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { lineChart } from '../report/svg-chart.ts';
import { measure } from './measure.ts';
import { Bars, factsLine, ms, pct, runFacts, runIfMain, scenarioOptions, withoutHistograms, writeResults } from './results.ts';
import { startEngineProcesses, startRouterSystem, type System } from './systems.ts';

const MODEL = 'tools-model';
const USERS = 200;
const TOOL_ARGS_BYTES = 1536;
const REQUEST: RequestTemplate = {
  path: '/v1/chat/completions',
  model: MODEL,
  stream: 'mixed',
  tools: true,
  promptBytes: 0,
  // 16 argument fragments per call, written in random splits: the byte boundaries land inside events and UTF-8 characters.
  headers: { 'x-sim-ttft-ms': '5', 'x-sim-itl-ms': '2', 'x-sim-output-tokens': '16', 'x-sim-tool-args-bytes': String(TOOL_ARGS_BYTES), 'x-sim-split': 'true' },
  users: USERS,
  checkIds: true,
};

/** The issue's load and bars: 100,000 requests checked, ramping to 900 requests/s, 800 of them sustained. */
const ISSUE = { requests: 100_000, rate: 900, sustained: 800 } as const;

const PLANS = {
  full: { requests: ISSUE.requests, rate: ISSUE.rate, rampFrom: 100, rampMs: 20_000, generators: 2 },
  quick: { requests: 20_000, rate: 900, rampFrom: 100, rampMs: 5_000, generators: 2 },
  smoke: { requests: 2_000, rate: 400, rampFrom: 100, rampMs: 1_000, generators: 1 },
} as const;

/** The load a run was asked for, which its bars follow. */
export interface IntegrityAsk {
  readonly requests: number;
  /** Requests/s the ramp ends at. */
  readonly rate: number;
  readonly rampMs: number;
}

/** What the bars read of a run. */
export type IntegrityRun = Pick<GeneratorRun, 'ok' | 'measured' | 'failed' | 'shed' | 'failureKinds' | 'timeline' | 'generatorBottleneck'>;

/** The throughput bar for `rate`: the issue's 800 of 900 requests/s, the same share of any other rate. */
export function sustainedBar(rate: number): number {
  return Math.round((rate * ISSUE.sustained) / ISSUE.rate);
}

/** Valid responses per second over the whole seconds after the ramp (the last, partial second left out); undefined when there are none. */
export function plateauOf(timeline: readonly number[], rampMs: number): { perS: number; seconds: number } | undefined {
  const plateau = timeline.slice(Math.ceil(rampMs / 1000), -1);
  return plateau.length === 0 ? undefined : { perS: plateau.reduce((a, b) => a + b, 0) / plateau.length, seconds: plateau.length };
}

/** The scenario's bars for `run`, at the load `ask` names. */
export function integrityBars(run: IntegrityRun, ask: IntegrityAsk): Bars {
  const bars = new Bars();
  const corrupt = run.failureKinds['corrupt'] ?? 0;
  bars.check('correctness', 'zero malformed or interleaved payloads', corrupt === 0, `${corrupt} of ${run.measured}`);
  bars.check('correctness', 'zero other failures (resets, timeouts, 5xx, unexpected 429)', run.failed - corrupt === 0 && run.shed === 0, `${run.failed - corrupt} failed, ${run.shed} shed${run.failed > corrupt ? ` (${Object.entries(run.failureKinds).map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}`);
  const issueCount = ask.requests === ISSUE.requests ? '' : ` (the issue's bar: ${ISSUE.requests.toLocaleString('en')})`;
  bars.check('correctness', `≥ ${ask.requests.toLocaleString('en')} requests checked${issueCount}`, run.ok >= ask.requests, `${run.ok} valid of ${run.measured}`);
  const wanted = sustainedBar(ask.rate);
  const issueRate = ask.rate === ISSUE.rate ? '' : ` (8/9 of the ramp's ${ask.rate} req/s; the issue's bar: ${ISSUE.sustained} of ${ISSUE.rate})`;
  const name = `≥ ${wanted} requests/s sustained after the ramp${issueRate}`;
  const plateau = plateauOf(run.timeline, ask.rampMs);
  const peak = Math.max(0, ...run.timeline);
  const generator = run.generatorBottleneck === undefined ? '' : `; load generator: ${run.generatorBottleneck}`;
  if (plateau === undefined) bars.notApplicable('performance', name, `no whole second after the ${ask.rampMs / 1000} s ramp (${run.timeline.length} s in all): ask for more requests`);
  else bars.check('performance', name, plateau.perS >= wanted, `${plateau.perS.toFixed(0)} req/s mean over ${plateau.seconds} s (peak second ${peak})${generator}`);
  return bars;
}

/** Entry point; returns the exit code. */
export async function toolCallIntegrity(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'tool-call-integrity');
  const preset = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const requests = Number(options.extra['requests'] ?? preset.requests);
  const rate = Number(options.extra['rate'] ?? preset.rate);
  const engines = await startEngineProcesses(2, MODEL, ['--max-seqs', '512']);
  let router: System | undefined;
  try {
    router = await startRouterSystem(engines.urls);
    // A rate below the ramp's start is offered flat.
    const rampFrom = Math.min(preset.rampFrom, rate);
    const spec: Omit<LoadSpec, 'target'> = {
      request: REQUEST,
      mode: { kind: 'open', ratePerS: rate, rampFromPerS: rampFrom, rampMs: preset.rampMs, maxConnections: USERS },
      warmupMs: 0,
      requests,
      idPrefix: 'tools',
      seed: 42,
    };
    const m = await measure(router, spec, { processes: options.generators || preset.generators, quiet: options.quiet }, `${requests} requests, ramp ${rampFrom}→${rate}/s`);
    const run = m.run;
    const ask: IntegrityAsk = { requests, rate, rampMs: preset.rampMs };
    const bars = integrityBars(run, ask);
    const plateau = plateauOf(run.timeline, preset.rampMs);

    const facts = runFacts(`npm run bench -- tool-call-integrity ${argv.join(' ')}`.trim());
    const markdown = [
      factsLine(facts),
      '',
      `${USERS} users (connections and \`x-session-id\` keys), one router (${router.description}) over 2 engine simulators; each request offers a function tool and gets a call with ${TOOL_ARGS_BYTES}-byte arguments in 16 fragments, written in random byte splits; half streamed. Open loop (Poisson), ramp ${rampFrom}→${rate} req/s over ${preset.rampMs / 1000} s, ${run.processes.length} generator processes.`,
      '',
      bars.markdown(options),
      '',
      '| requests | valid | failed | req/s (whole run) | req/s (after ramp) | latency p50 ms | latency p99 ms | TTFT p50 ms | TTFT p99 ms | inter-token p99 ms | router CPU | router peak RSS MiB |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      `| ${run.measured} | ${run.ok} | ${run.failed} | ${m.rps.toFixed(0)} | ${plateau === undefined ? '-' : plateau.perS.toFixed(0)} | ${ms(m.e2e.p50)} | ${ms(m.e2e.p99)} | ${ms(m.ttft.p50)} | ${ms(m.ttft.p99)} | ${ms(m.itl.p99)} | ${pct(m.systemCpu)} | ${(m.peakRss / 2 ** 20).toFixed(0)} |`,
      ...(run.failureExamples.length > 0 ? ['', 'First failures (full list in the JSON):', ...run.failureExamples.map((e) => `- ${e.requestId}: ${e.problem}`)] : []),
      '',
      'Chart: `tool-call-integrity-throughput.svg` (valid responses per second).',
    ].join('\n');
    const chart = lineChart({ title: 'Tool-call integrity: valid responses per second', xLabel: 'seconds since start', yLabel: 'valid responses/s', series: [{ name: 'through switchyard', points: run.timeline.map((n, s) => [s, n] as const) }], thresholds: [{ label: `${sustainedBar(rate)} req/s`, y: sustainedBar(rate) }] });
    writeResults(options, 'tool-call-integrity', facts, { preset, requests, rate, bars: bars.list, measurement: withoutHistograms(m) }, markdown, [{ name: 'throughput', svg: chart }]);
    return bars.pass(options) ? 0 : 1;
  } finally {
    await router?.stop();
    await engines.stop();
  }
}

runIfMain(import.meta.url, toolCallIntegrity);

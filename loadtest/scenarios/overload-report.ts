/**
 * Verdict and Markdown for the overload scenario. Every bar is the issue's:
 * shedding on must keep the fleet busy (≥ 90% of capacity served, every
 * engine ≥ 90% of its slots busy), keep admitted TTFT within 2× the unloaded
 * p99, answer excess with a fast 429, keep engine queues within maxWaiting +
 * 1 (one router replica), and never answer 5xx or reset.
 */
import type { LatencySummary } from '../bench/stats.ts';
import type { EngineSpec } from './fleet.ts';
import { factsLine, type RunFacts } from './results.ts';

/** One run of the arrival schedule. */
export interface OverloadRun {
  readonly name: string;
  /** The router's admission.maxWaiting, or 'off' (shedding disabled). */
  readonly maxWaitingSetting: number | 'off';
  readonly offeredPerS: number;
  readonly requests: number;
  readonly served: number;
  readonly shed: number;
  readonly routerErrors5xx: number;
  readonly resets: number;
  readonly otherErrors: number;
  readonly servedPerS: number;
  readonly ttftMs: LatencySummary;
  /** Time to the complete 429 answer. */
  readonly shedAnswerMs: LatencySummary;
  /** Per engine, mean running sequences over the measured window. */
  readonly meanRunning: number[];
  /** Per engine, highest num_requests_waiting sampled. */
  readonly peakWaiting: number[];
  readonly livezMs: LatencySummary | undefined;
  readonly livezFailures: number;
  /** Each engine's waiting queue, every 500 ms from the start of the run (warm-up included). */
  readonly queueDepth: readonly { readonly atS: number; readonly waiting: readonly number[] }[];
}

/** The seed report's burst. */
export interface BurstResult {
  readonly requests: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly statuses: Record<string, number>;
  readonly routerAlive: boolean;
  readonly livezMs: LatencySummary;
  readonly livezFailures: number;
}

/** New connections arriving within one second. */
export interface ConnectionBurstResult {
  readonly connections: number;
  readonly statuses: Record<string, number>;
  readonly routerAlive: boolean;
  readonly livezMs: LatencySummary;
  readonly livezFailures: number;
}

/** Everything the scenario measured. */
export interface OverloadResult {
  readonly facts: RunFacts;
  readonly fleet: readonly EngineSpec[];
  readonly serviceMs: readonly number[];
  readonly capacityPerS: number;
  readonly maxWaiting: number;
  readonly unloaded: OverloadRun;
  /** The run the verdict applies to. */
  readonly on: OverloadRun;
  /** The same with the default maxWaiting, for contrast. */
  readonly onDefault: OverloadRun;
  readonly off: OverloadRun;
  readonly burst: BurstResult;
  readonly connections: ConnectionBurstResult;
}

/** One checked bar. */
export interface Check {
  readonly bar: string;
  readonly measured: string;
  readonly pass: boolean;
  /** A correctness bar (no errors, no resets, only 200/429), as opposed to a speed or load bar. */
  readonly correctness?: boolean;
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** Applies every bar to the shedding-on run and the burst. */
export function overloadVerdict(r: OverloadResult): { pass: boolean; checks: Check[] } {
  const on = r.on;
  const checks: Check[] = [
    { bar: 'no router-caused 5xx, no resets (shedding on)', measured: `${on.routerErrors5xx} 5xx, ${on.resets} resets, ${on.otherErrors} other errors`, pass: on.routerErrors5xx === 0 && on.resets === 0 && on.otherErrors === 0, correctness: true },
    { bar: 'admitted throughput ≥ 90% of fleet capacity', measured: `${f(on.servedPerS)} of ${f(r.capacityPerS)} req/s (${f((100 * on.servedPerS) / r.capacityPerS, 0)}%)`, pass: on.servedPerS >= 0.9 * r.capacityPerS },
    ...r.fleet.map((spec, i) => ({
      bar: `engine ${spec.name}: running ≥ 90% of max-seqs ${spec.maxSeqs}`,
      measured: `mean ${f(on.meanRunning[i] as number)} (${f((100 * (on.meanRunning[i] as number)) / spec.maxSeqs, 0)}%)`,
      pass: (on.meanRunning[i] as number) >= 0.9 * spec.maxSeqs,
    })),
    { bar: 'admitted TTFT p99 within 2× unloaded p99', measured: `${f(on.ttftMs.p99)} ms vs unloaded ${f(r.unloaded.ttftMs.p99)} ms (${f(on.ttftMs.p99 / r.unloaded.ttftMs.p99, 2)}×)`, pass: on.ttftMs.p99 <= 2 * r.unloaded.ttftMs.p99 },
    { bar: 'excess answered 429 within 5 ms (p99)', measured: `p50 ${f(on.shedAnswerMs.p50, 2)} / p99 ${f(on.shedAnswerMs.p99, 2)} / max ${f(on.shedAnswerMs.max, 2)} ms over ${on.shed} sheds`, pass: on.shed > 0 && on.shedAnswerMs.p99 <= 5 },
    { bar: `engines' waiting ≤ maxWaiting + 1 replica = ${r.maxWaiting + 1}`, measured: `max ${on.peakWaiting.join(' / ')}`, pass: on.peakWaiting.every((w) => w <= r.maxWaiting + 1) },
    { bar: '/livez p99 < 100 ms from another process while shedding', measured: on.livezMs ? `p50 ${f(on.livezMs.p50, 2)} / p99 ${f(on.livezMs.p99, 2)} / max ${f(on.livezMs.max, 2)} ms, ${on.livezFailures} failed` : '-', pass: on.livezMs !== undefined && on.livezMs.p99 < 100 && on.livezFailures === 0 },
    {
      bar: `burst of ${r.burst.requests} at ${r.burst.concurrency} concurrent: every request 200 or 429, router alive`,
      measured: `${JSON.stringify(r.burst.statuses)}, alive: ${String(r.burst.routerAlive)}`,
      pass: r.burst.routerAlive && Object.keys(r.burst.statuses).every((k) => k === '200' || k === '429'),
      correctness: true,
    },
    { bar: '/livez p99 < 100 ms during the burst', measured: `p50 ${f(r.burst.livezMs.p50, 2)} / p99 ${f(r.burst.livezMs.p99, 2)} / max ${f(r.burst.livezMs.max, 2)} ms, ${r.burst.livezFailures} failed`, pass: r.burst.livezMs.p99 < 100 && r.burst.livezFailures === 0 },
    {
      bar: `${r.connections.connections} new connections in 1 s: every request 200 or 429, router alive`,
      measured: `${JSON.stringify(r.connections.statuses)}, alive: ${String(r.connections.routerAlive)}`,
      pass: r.connections.routerAlive && Object.keys(r.connections.statuses).every((k) => k === '200' || k === '429'),
      correctness: true,
    },
    { bar: `/livez p99 < 100 ms during the ${r.connections.connections}-connection burst`, measured: `p50 ${f(r.connections.livezMs.p50, 2)} / p99 ${f(r.connections.livezMs.p99, 2)} / max ${f(r.connections.livezMs.max, 2)} ms, ${r.connections.livezFailures} failed`, pass: r.connections.livezMs.p99 < 100 && r.connections.livezFailures === 0 },
  ];
  return { pass: checks.every((c) => c.pass), checks };
}

function runRow(run: OverloadRun): string {
  return `| ${run.name} | ${f(run.offeredPerS)} | ${run.requests} | ${run.served} | ${f(run.servedPerS)} | ${run.shed} | ${run.routerErrors5xx} | ${run.resets} | ${f(run.ttftMs.p50, 0)} | ${f(run.ttftMs.p99, 0)} | ${run.meanRunning.map((m) => f(m)).join(' / ')} | ${run.peakWaiting.join(' / ')} | ${run.livezMs ? f(run.livezMs.p99, 2) : '-'} |`;
}

/** The report. */
export function overloadMarkdown(r: OverloadResult, verdict: { pass: boolean; checks: Check[] }): string {
  const lines = [
    factsLine(r.facts),
    '',
    `Fleet: ${r.fleet.map((s) => `${s.name} (max-seqs ${s.maxSeqs}, TTFT ${s.ttftMs} ms, ITL ${s.itlMs} ms, ${s.outputTokens} tokens)`).join(', ')}; measured service times ${r.serviceMs.map((ms) => f(ms, 0)).join(' / ')} ms, so capacity ≈ ${f(r.capacityPerS)} req/s. Router maxWaiting ${r.maxWaiting}.`,
    '',
    '| run | offered req/s | requests | served | served/s | shed (429) | 5xx | resets | TTFT p50 ms | TTFT p99 ms | mean running per engine | max waiting per engine | /livez p99 ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    runRow(r.unloaded),
    runRow(r.on),
    runRow(r.onDefault),
    runRow(r.off),
    '',
    `Burst: ${r.burst.requests} non-streaming requests at ${r.burst.concurrency} concurrent in ${f(r.burst.seconds)} s: ${JSON.stringify(r.burst.statuses)}; /livez p99 ${f(r.burst.livezMs.p99, 2)} ms.`,
    '',
    `Connection burst: ${r.connections.connections} new connections within 1 s, one request each: ${JSON.stringify(r.connections.statuses)}; /livez p99 ${f(r.connections.livezMs.p99, 2)} ms.`,
    '',
    `| bar (run "${r.on.name}") | measured | |`,
    '|---|---|---|',
    ...verdict.checks.map((c) => `| ${c.bar} | ${c.measured} | ${c.pass ? 'PASS' : 'FAIL'} |`),
    '',
    `Verdict: ${verdict.pass ? 'PASS' : 'FAIL'}`,
  ];
  return `${lines.join('\n')}\n`;
}

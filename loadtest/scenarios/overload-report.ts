/**
 * Verdict and Markdown for the overload scenario. The bars are the issue's,
 * applied to the router's defaults (no admission flag set) on two fleets,
 * small slow engines and a large fast one, at three times what they serve:
 * engines stay ≥ 95% busy, the engine-side TTFT p99 (the engine having the
 * request to its first token, its own queue included) within 2× unloaded,
 * the client-side TTFT p99 within the router queue's deadline, excess
 * answered 429 at once, never a 5xx or a reset. The seed report's burst,
 * whose expected drain fits the deadline, is served whole.
 */
import type { LatencySummary } from '../bench/stats.ts';
import type { EngineSpec } from './fleet.ts';
import { Bars, factsLine, type RunFacts } from './results.ts';

/** One run of the arrival schedule. */
export interface OverloadRun {
  readonly name: string;
  /** The admission flags the router ran with ([] = defaults). */
  readonly admission: readonly string[];
  readonly offeredPerS: number;
  readonly requests: number;
  readonly served: number;
  readonly shed: number;
  /** 429s the client had within 5 ms of sending (its own event-loop delay included). */
  readonly shedAtOnce: number;
  /**
   * The router's own clock for the same 429s (`switchyard_shed_duration_seconds`,
   * arrival to complete answer, warm-up included): how many it answered, and within 5 ms.
   */
  readonly routerShed: { readonly total: number; readonly within5ms: number };
  /** The load generator's event-loop delay p99 (ms): what it adds to every client-side time. */
  readonly generatorLagP99Ms: number;
  readonly routerErrors5xx: number;
  readonly resets: number;
  readonly otherErrors: number;
  readonly servedPerS: number;
  /** Client-side time to first token of the served requests (router queue included). */
  readonly ttftMs: LatencySummary;
  /** Engine-side time to first token: the engine having the request to its first token, its queue included. */
  readonly engineTtftMs: LatencySummary;
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

/** The runs on one fleet. */
export interface FleetRuns {
  readonly label: string;
  readonly fleet: readonly EngineSpec[];
  readonly serviceMs: readonly number[];
  readonly capacityPerS: number;
  readonly unloaded: OverloadRun;
  /** The router's defaults at 3× capacity: the run the bars apply to. */
  readonly defaults: OverloadRun;
  /** Other admission settings at the same load, for contrast. */
  readonly contrast: readonly OverloadRun[];
}

/** The seed report's burst through one router. */
export interface BurstResult {
  readonly name: string;
  readonly admission: readonly string[];
  readonly requests: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly statuses: Record<string, number>;
  /** Time to the whole answer, every request. */
  readonly latencyMs: LatencySummary;
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
  /** The router queue's deadline by default (ms). */
  readonly queueDeadlineMs: number;
  readonly fleets: readonly FleetRuns[];
  readonly burstFleet: readonly EngineSpec[];
  /** The burst with the defaults (first) and with shedding at once. */
  readonly bursts: readonly BurstResult[];
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
const onlyOkOrShed = (statuses: Record<string, number>) => Object.keys(statuses).every((k) => k === '200' || k === '429');

function fleetChecks(runs: FleetRuns, deadlineMs: number): Check[] {
  const on = runs.defaults;
  const at = `${runs.label}, defaults`;
  return [
    { bar: `${at}: no router-caused 5xx, no resets`, measured: `${on.routerErrors5xx} 5xx, ${on.resets} resets, ${on.otherErrors} other errors`, pass: on.routerErrors5xx === 0 && on.resets === 0 && on.otherErrors === 0, correctness: true },
    ...runs.fleet.map((spec, i) => ({
      bar: `${at}: engine ${spec.name} running ≥ 95% of its ${spec.maxSeqs} slots`,
      measured: `mean ${f(on.meanRunning[i] as number)} (${f((100 * (on.meanRunning[i] as number)) / spec.maxSeqs, 0)}%)`,
      pass: (on.meanRunning[i] as number) >= 0.95 * spec.maxSeqs,
    })),
    {
      bar: `${at}: engine-side TTFT p99 within 2× unloaded`,
      measured: `${f(on.engineTtftMs.p99)} ms vs unloaded ${f(runs.unloaded.engineTtftMs.p99)} ms (${f(on.engineTtftMs.p99 / runs.unloaded.engineTtftMs.p99, 2)}×)`,
      pass: on.engineTtftMs.p99 <= 2 * runs.unloaded.engineTtftMs.p99,
    },
    { bar: `${at}: client-side TTFT p99 within the router queue's deadline (${deadlineMs / 1000} s)`, measured: `${f(on.ttftMs.p99, 0)} ms`, pass: on.ttftMs.p99 <= deadlineMs },
    {
      // Judged on the router's clock: the client's includes the load generator's own event-loop delay
      // (it runs the engines too), shown beside it.
      bar: `${at}: ≥ 99% of 429s answered within 5 ms inside the router (a queue that never passed its deadline sheds none)`,
      measured:
        `router: ${on.routerShed.within5ms} of ${on.routerShed.total} (${f((100 * on.routerShed.within5ms) / Math.max(1, on.routerShed.total), 1)}%); ` +
        `client: ${on.shedAtOnce} of ${on.shed} (${f((100 * on.shedAtOnce) / Math.max(1, on.shed), 1)}%), p50 ${f(on.shedAnswerMs.p50, 2)} / p99 ${f(on.shedAnswerMs.p99, 2)} ms, generator loop delay p99 ${f(on.generatorLagP99Ms, 1)} ms`,
      pass: on.routerShed.total > 0 && on.routerShed.within5ms >= 0.99 * on.routerShed.total,
    },
    { bar: `${at}: /livez p99 < 100 ms from another process`, measured: on.livezMs ? `p99 ${f(on.livezMs.p99, 2)} ms, ${on.livezFailures} failed` : '-', pass: on.livezMs !== undefined && on.livezMs.p99 < 100 && on.livezFailures === 0 },
  ];
}

/** Applies every bar to the defaults runs and the bursts. */
export function overloadVerdict(r: OverloadResult): { pass: boolean; checks: Check[] } {
  const [defaults, ...others] = r.bursts;
  const checks: Check[] = [...r.fleets.flatMap((runs) => fleetChecks(runs, r.queueDeadlineMs))];
  if (defaults !== undefined) {
    checks.push(
      {
        bar: `burst of ${defaults.requests} at ${defaults.concurrency} concurrent, defaults: every request served (its drain fits the deadline), router alive`,
        measured: `${JSON.stringify(defaults.statuses)} in ${f(defaults.seconds)} s, p50 ${f(defaults.latencyMs.p50, 0)} ms, alive: ${String(defaults.routerAlive)}`,
        pass: defaults.routerAlive && defaults.statuses['200'] === defaults.requests,
      },
      { bar: 'burst, defaults: /livez p99 < 100 ms', measured: `p99 ${f(defaults.livezMs.p99, 2)} ms, ${defaults.livezFailures} failed`, pass: defaults.livezMs.p99 < 100 && defaults.livezFailures === 0 },
    );
  }
  for (const burst of others) {
    checks.push({ bar: `burst, ${burst.name}: every request 200 or 429, router alive`, measured: `${JSON.stringify(burst.statuses)}, alive: ${String(burst.routerAlive)}`, pass: burst.routerAlive && onlyOkOrShed(burst.statuses), correctness: true });
  }
  checks.push(
    {
      bar: `${r.connections.connections} new connections in 1 s: every request 200 or 429, router alive`,
      measured: `${JSON.stringify(r.connections.statuses)}, alive: ${String(r.connections.routerAlive)}`,
      pass: r.connections.routerAlive && onlyOkOrShed(r.connections.statuses),
      correctness: true,
    },
    { bar: `/livez p99 < 100 ms during the ${r.connections.connections}-connection burst`, measured: `p99 ${f(r.connections.livezMs.p99, 2)} ms, ${r.connections.livezFailures} failed`, pass: r.connections.livezMs.p99 < 100 && r.connections.livezFailures === 0 },
  );
  return { pass: checks.every((c) => c.pass), checks };
}

function runRow(run: OverloadRun): string {
  const admission = run.admission.length === 0 ? 'defaults' : `\`${run.admission.join(' ')}\``;
  return `| ${run.name} | ${admission} | ${f(run.offeredPerS)} | ${run.served} | ${f(run.servedPerS)} | ${run.shed} | ${run.routerErrors5xx} / ${run.resets} | ${f(run.ttftMs.p50, 0)} | ${f(run.ttftMs.p99, 0)} | ${f(run.engineTtftMs.p50, 0)} | ${f(run.engineTtftMs.p99, 0)} | ${run.meanRunning.map((m) => f(m)).join(' / ')} | ${run.peakWaiting.join(' / ')} | ${run.livezMs ? f(run.livezMs.p99, 2) : '-'} |`;
}

function fleetTable(runs: FleetRuns): string[] {
  return [
    `**${runs.label}**: ${runs.fleet.map((s) => `${s.name} (${s.maxSeqs} slots, TTFT ${s.ttftMs} ms, ITL ${s.itlMs} ms, ${s.outputTokens} tokens)`).join(', ')}; measured service times ${runs.serviceMs.map((ms) => f(ms, 0)).join(' / ')} ms, so capacity ≈ ${f(runs.capacityPerS)} req/s.`,
    '',
    '| run | admission | offered req/s | served | served/s | 429 | 5xx / resets | client TTFT p50 ms | client TTFT p99 ms | engine TTFT p50 ms | engine TTFT p99 ms | mean running per engine | max waiting per engine | /livez p99 ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...[runs.unloaded, runs.defaults, ...runs.contrast].map(runRow),
    '',
  ];
}

function burstRow(b: BurstResult): string {
  const admission = b.admission.length === 0 ? 'defaults' : `\`${b.admission.join(' ')}\``;
  return `| ${b.name} | ${admission} | ${b.statuses['200'] ?? 0} | ${b.statuses['429'] ?? 0} | ${Object.entries(b.statuses).filter(([k]) => k !== '200' && k !== '429').map(([k, n]) => `${k} ${n}`).join(', ') || '0'} | ${f(b.seconds)} | ${f(b.latencyMs.p50, 0)} | ${f(b.latencyMs.p99, 0)} | ${f(b.livezMs.p99, 2)} |`;
}

/** The checks as bars, so a smoke run reports the speed and load bars it does not judge as such, and `bench all` can list the failed ones. */
export function overloadBars(checks: readonly Check[]): Bars {
  const bars = new Bars();
  for (const c of checks) bars.check(c.correctness === true ? 'correctness' : 'performance', c.bar, c.pass, c.measured);
  return bars;
}

/** The report; `bars` is the bars' table and verdict (`Bars.markdown`). */
export function overloadMarkdown(r: OverloadResult, bars: string): string {
  const first = r.bursts[0];
  const lines = [
    factsLine(r.facts),
    '',
    `Each fleet is offered 3× what it serves (streamed chat, Poisson arrivals) through one router. "Client TTFT" is measured by the load generator (router queue included); "engine TTFT" by the engines, from having the request to its first token (their own queue included). The router queue's default deadline is ${r.queueDeadlineMs / 1000} s.`,
    '',
    ...r.fleets.flatMap(fleetTable),
    first === undefined
      ? ''
      : `**Burst** (the crash report's \`ab -n ${first.requests} -c ${first.concurrency}\` shape, non-streamed, ${first.concurrency} closed-loop clients): ${r.burstFleet.map((s) => `${s.name} (${s.maxSeqs} slots, TTFT ${s.ttftMs} ms, ITL ${s.itlMs} ms, ${s.outputTokens} tokens)`).join(', ')}.`,
    '',
    '| burst | admission | 200 | 429 | other | seconds | latency p50 ms | latency p99 ms | /livez p99 ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.bursts.map(burstRow),
    '',
    `Connection burst: ${r.connections.connections} new connections within 1 s, one request each: ${JSON.stringify(r.connections.statuses)}; /livez p99 ${f(r.connections.livezMs.p99, 2)} ms.`,
    '',
    bars,
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The routing-quality report: its bars, the Markdown printed and written
 * next to the JSON, and its chart.
 */
import { lineChart } from '../report/svg-chart.ts';
import type { EngineSpec } from './fleet.ts';
import { Bars, factsLine, ms, pct, type Chart, type RunFacts } from './results.ts';
import type { PolicyResult } from './run-policy.ts';

/**
 * The bars. No failed request under any policy (a 429 with Retry-After is
 * the router's documented answer to saturation, so it is reported as shed,
 * not failed); least-load's p99 TTFT strictly below round-robin's; and
 * least-load shedding no more than round-robin, since TTFT is taken over
 * served requests and shedding would flatter it. The last two rank policies,
 * so they are comparison bars: judged in full runs only.
 */
export function judge(results: readonly PolicyResult[]): Bars {
  const bars = new Bars();
  const failing = results.filter((r) => r.errors > 0);
  bars.check('correctness', 'no failed requests under any policy (a 429 with Retry-After is shed, not failed)', failing.length === 0, failing.length === 0 ? '0 failed' : failing.map((r) => `${r.policy}: ${r.errors} failed (${r.errorExamples.join('; ')})`).join('; '));
  const leastLoad = results.find((r) => r.policy === 'least-load');
  const roundRobin = results.find((r) => r.policy === 'round-robin');
  if (leastLoad === undefined || roundRobin === undefined) {
    bars.check('comparison', 'least-load p99 TTFT below round-robin without shedding more', false, 'least-load and round-robin must both run (--policies) to compare them');
    return bars;
  }
  bars.check('comparison', "least-load p99 TTFT below round-robin's", leastLoad.ttftMs.p99 < roundRobin.ttftMs.p99, `${ms(leastLoad.ttftMs.p99)} vs ${ms(roundRobin.ttftMs.p99)} ms`);
  bars.check('comparison', 'least-load sheds no more than round-robin', leastLoad.shed <= roundRobin.shed, `${leastLoad.shed} vs ${roundRobin.shed} shed`);
  return bars;
}

/** Percentiles the TTFT chart draws, as x values. */
const CHART_PERCENTILES = [
  [50, 'p50'],
  [90, 'p90'],
  [99, 'p99'],
] as const;

/** TTFT p50, p90 and p99 per policy: one line each, so a policy's tail shows beside its median. */
export function ttftChart(results: readonly PolicyResult[]): Chart {
  return {
    name: 'ttft',
    svg: lineChart({
      title: 'Routing quality: time to first token per policy',
      xLabel: 'percentile',
      yLabel: 'TTFT ms',
      logY: true,
      series: results.map((r) => ({ name: r.policy, points: CHART_PERCENTILES.map(([x, key]) => [x, r.ttftMs[key]] as const) })),
    }),
  };
}

/** What the scenario was, for the report header. */
export interface ScenarioFacts {
  readonly fleet: readonly EngineSpec[];
  readonly nominalServiceMs: readonly number[];
  readonly measuredServiceMs: readonly number[];
  readonly capacityPerS: number;
  readonly ratePerS: number;
  readonly arrivals: number;
  readonly warmupS: number;
  readonly durationS: number;
  readonly sessionShare: number;
  readonly sessions: number;
  readonly seed: number;
}

/** The Markdown report; `bars` is the bars' table and verdict (`Bars.markdown`). */
export function markdown(results: readonly PolicyResult[], scenario: ScenarioFacts, facts: RunFacts, bars: string): string {
  const names = scenario.fleet.map((e) => e.name).join('/');
  const engines = scenario.fleet
    .map((e, i) => `${e.name}: ${e.maxSeqs} seqs, ttft ${e.ttftMs} ms, itl ${e.itlMs} ms, ${e.outputTokens} tokens → ${ms(scenario.measuredServiceMs[i] as number)} ms per request (nominal ${ms(scenario.nominalServiceMs[i] as number)})`)
    .join('; ');
  const lines = [
    factsLine(facts),
    '',
    `Engines: ${engines}.`,
    `Fleet capacity ${scenario.capacityPerS.toFixed(1)} req/s (Σ slots / measured service time); offered ${scenario.ratePerS.toFixed(1)} req/s Poisson (${pct(scenario.ratePerS / scenario.capacityPerS)}), seed ${scenario.seed}, ${scenario.arrivals} arrivals over ${scenario.warmupS} s warm-up + ${scenario.durationS} s measured; ${pct(scenario.sessionShare)} carry one of ${scenario.sessions} session keys.`,
    '',
    bars,
    '',
    `| policy | requests | errors | shed (429) | TTFT p50 ms | TTFT p99 ms | queue imbalance (samples with a queue) | mean queued (all engines) | max waiting ${names} | served ${names} | session hit ratio | drain after load s | router CPU |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.policy} | ${r.requests} | ${r.errors} | ${r.shed} | ${ms(r.ttftMs.p50)} | ${ms(r.ttftMs.p99)} | ${Number.isNaN(r.queues.imbalance) ? '-' : r.queues.imbalance.toFixed(2)} (${r.queues.samplesWithQueue}/${r.queues.samples}) | ${r.queues.meanWaiting.reduce((a, b) => a + b, 0).toFixed(1)} | ${r.queues.maxWaiting.join('/')} | ${r.servedShare.map(pct).join('/')} | ${pct(r.sessionHitRatio)} (${r.sessionHits}/${r.sessionRepeats}) | ${(r.drainMs / 1000).toFixed(1)} | ${r.routerCpu === undefined ? '-' : pct(r.routerCpu)} |`,
    );
  }
  lines.push(
    '',
    'TTFT: from the scheduled arrival to the first SSE `data:` event, over served requests. Session hit ratio: keyed requests that reached the engine that served the key\'s previous request (first request of each key excluded).',
    '',
    'Queue imbalance: engines\' waiting queues sampled every 100 ms in the measured window; per sample max/mean across engines (1 = even, 4 = all queued on one engine), averaged over the samples where some engine had a queue. It is scale-free: read it with mean queued and max waiting.',
  );
  lines.push('', `Router decisions (whole run, warm-up included): ${results.map((r) => `${r.policy} ${Object.entries(r.decisions).map(([k, v]) => `${k} ${v}`).join(', ')}`).join('; ')}.`);
  lines.push('', `Client process (generator + engines) event-loop delay p99 (beyond its 10 ms sampling period): ${results.map((r) => `${r.policy} ${ms(r.clientLoopDelayP99Ms)} ms`).join(', ')}; send lag p99: ${results.map((r) => `${r.policy} ${ms(r.sendLagMs.p99)} ms`).join(', ')}.`);
  lines.push('', 'Chart: `routing-quality-ttft.svg` (TTFT p50, p90 and p99 per policy).');
  return lines.join('\n');
}

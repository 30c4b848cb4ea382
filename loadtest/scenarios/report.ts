/**
 * The routing-quality report: the verdict rule and the
 * Markdown table printed and written next to the JSON.
 */
import type { EngineSpec } from './fleet.ts';
import { factsLine, ms, pct, type RunFacts } from './results.ts';
import type { PolicyResult } from './run-policy.ts';

/**
 * The verdict. PASS needs: no failed request under any policy (a 429 with
 * Retry-After is the router's documented answer to saturation, so it is
 * reported as shed, not failed); least-load's p99 TTFT strictly below
 * round-robin's; and least-load shedding no more than round-robin, since
 * TTFT is taken over served requests and shedding would flatter it.
 */
export interface Verdict {
  readonly pass: boolean;
  readonly reasons: string[];
}

/** Applies the rule in {@link Verdict} to `results`. */
export function verdict(results: readonly PolicyResult[]): Verdict {
  const reasons: string[] = [];
  for (const r of results) if (r.errors > 0) reasons.push(`${r.policy}: ${r.errors} failed requests (${r.errorExamples.join('; ')})`);
  const leastLoad = results.find((r) => r.policy === 'least-load');
  const roundRobin = results.find((r) => r.policy === 'round-robin');
  if (leastLoad === undefined || roundRobin === undefined) reasons.push('least-load and round-robin must both run to compare them');
  else if (!(leastLoad.ttftMs.p99 < roundRobin.ttftMs.p99)) {
    reasons.push(`least-load p99 TTFT ${ms(leastLoad.ttftMs.p99)} ms is not below round-robin's ${ms(roundRobin.ttftMs.p99)} ms`);
  }
  if (leastLoad !== undefined && roundRobin !== undefined && leastLoad.shed > roundRobin.shed) {
    reasons.push(`least-load shed ${leastLoad.shed} requests, more than round-robin's ${roundRobin.shed}`);
  }
  return { pass: reasons.length === 0, reasons };
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

/** The Markdown report. */
export function markdown(results: readonly PolicyResult[], scenario: ScenarioFacts, facts: RunFacts, outcome: Verdict): string {
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
  lines.push('', `Verdict: ${outcome.pass ? 'PASS' : 'FAIL'}${outcome.reasons.length > 0 ? ` — ${outcome.reasons.join('; ')}` : ' — no failed requests; least-load p99 TTFT below round-robin without shedding more'}`);
  return lines.join('\n');
}

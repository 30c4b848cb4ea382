/**
 * `npm run bench -- shared-state`: router replicas that agree through Redis.
 * Three replicas behind nginx round-robin (and one alone) over four engines
 * of unequal capacity, at 50% and 85% of their capacity, the same runs with
 * and without a real redis-server the scenario starts:
 *
 * - session stickiness at 50%, with a fifth engine joining halfway;
 * - at 85%, every conversation that changed engine is a move the routers
 *   counted; Redis killed, restarted and paused mid-run costs no request and
 *   sheds like the run without Redis; how long the fleet takes to agree again;
 * - least-load with three replicas against one router (median of rounds);
 * - one API key's quota across three replicas, with Redis and degraded;
 * - what Redis costs per request (latency, router CPU, Redis commands).
 *
 * A feature the routers do not have yet shows as a failed bar that says so.
 *
 *   npm run bench -- shared-state [--quick | --smoke]
 */
import { startRedisServer } from '../../tests/kit/redis/redis-server.ts';
import { closeSimulatedFleet, fleetCapacityPerS, measureServiceMs, startSimulatedFleet } from './fleet.ts';
import { factsLine, runFacts, runIfMain, scenarioOptions, withoutHistograms, writeResults } from './results.ts';
import { checkBars, type SharedStateRuns } from './shared-state-bars.ts';
import { LateEngine } from './shared-state-late-engine.ts';
import { leastLoadRounds } from './shared-state-least-load.ts';
import { ENGINES, LATE_ENGINE, LOADS, MODEL, planFor } from './shared-state-plan.ts';
import { quotaRuns } from './shared-state-quota.ts';
import { reportCharts, reportMarkdown } from './shared-state-report.ts';
import type { RunResult } from './shared-state-run.ts';
import { busyRuns, calmRuns } from './shared-state-session-runs.ts';

/** A run for the JSON results: histograms and raw session records left out (their figures are in it). */
function forJson<T>(run: RunResult<T>): unknown {
  const { sessions: _sessions, measurement, ...rest } = run;
  return { ...rest, measurement: withoutHistograms(measurement) };
}

/** Entry point; returns the exit code. */
export async function sharedState(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'shared-state');
  const plan = planFor(options);
  const engines = await startSimulatedFleet(MODEL, ENGINES);
  const redis = await startRedisServer();
  try {
    const capacityPerS = fleetCapacityPerS(ENGINES, await measureServiceMs(engines, MODEL, plan.calibrationSamples));
    const setup = { capacityPerS, calmPerS: Math.round(capacityPerS * LOADS.calm), busyPerS: Math.round(capacityPerS * LOADS.busy) };
    const bench = { engines, late: await LateEngine.reserve(MODEL, LATE_ENGINE), redis, generators: options.generators || 1, quiet: options.quiet };
    const runs: SharedStateRuns = {
      calm: await calmRuns(bench, plan, setup.calmPerS),
      busy: await busyRuns(bench, plan, setup.busyPerS),
      leastLoad: plan.leastLoadRounds === 0 ? [] : await leastLoadRounds(bench, plan, setup.busyPerS),
      quota: await quotaRuns(bench, plan),
    };
    const bars = checkBars(runs);
    const facts = runFacts(`npm run bench -- shared-state ${argv.join(' ')}`.trim());
    const markdown = [factsLine(facts), '', reportMarkdown(setup, runs, bars.markdown(options))].join('\n');
    const data = {
      plan,
      setup,
      bars: bars.list,
      calm: runs.calm.map((c) => ({ ...c, run: forJson({ ...c.run, during: c.run.during === undefined ? undefined : { atMs: c.run.during.atMs, routableAfterMs: c.run.during.routableAfterMs } }) })),
      busy: runs.busy.map((b) => ({ ...b, run: forJson(b.run) })),
      leastLoad: runs.leastLoad.map((s) => ({ ...s, runs: s.runs.map(forJson) })),
      quota: runs.quota.map((q) => ({ ...q, run: q.run === undefined ? undefined : forJson(q.run) })),
    };
    writeResults(options, 'shared-state', facts, data, markdown, reportCharts(runs));
    return bars.pass(options) ? 0 : 1;
  } finally {
    await redis.stop();
    await closeSimulatedFleet(engines);
  }
}

runIfMain(import.meta.url, sharedState);

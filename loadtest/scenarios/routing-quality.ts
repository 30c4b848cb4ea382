/**
 * `npm run bench:routing`: routing quality of each policy on a heterogeneous
 * fleet. Four in-process simulated engines (slots 8/8/4/2, the small ones
 * slower) take a seeded open-loop Poisson mix of conversation turns and
 * one-shot streams through a router child process, once per policy with the
 * same arrivals. Prints a Markdown report, writes JSON, Markdown and a TTFT
 * chart under loadtest/results/, and exits 1 when a request failed (a 429
 * with Retry-After counts as shed, not failed) or, in a full run, least-load
 * did not beat round-robin on p99 TTFT without shedding more (report.ts
 * judge(); a quick run is too short to rank policies, so it reports that
 * comparison without judging it).
 */
import { closeSimulatedFleet, FLEET, fleetCapacityPerS, measureServiceMs, nominalServiceMs, startSimulatedFleet } from './fleet.ts';
import { poissonSchedule } from './poisson.ts';
import { judge, markdown, ttftChart, type ScenarioFacts } from './report.ts';
import { runFacts, runIfMain, scenarioOptions, writeResults, type RunMode } from './results.ts';
import { ScenarioUsage, usageError } from './scenario-args.ts';
import { runPolicy, type PolicyResult } from './run-policy.ts';

const MODEL = 'routing-bench';
/** Router scrape period: four scrapes a second, fast enough to see a queue form. */
const SCRAPE_INTERVAL_MS = 250;
const SAMPLE_PERIOD_MS = 100;

/** The run's settings, from the command line (registry.ts lists the options). */
interface Options extends RunMode {
  durationS: number;
  warmupS: number;
  load: number;
  rate: number | undefined;
  sessions: number;
  sessionShare: number;
  seed: number;
  policies: string[];
  routerArgs: string[];
  out: string;
}

/** `value` as a non-negative number (undefined when not given); anything else is a usage error. */
function nonNegative(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < 0) throw new ScenarioUsage(2, usageError('routing-quality', `--${option}: expected a non-negative number, got ${JSON.stringify(value)}`));
  return number;
}

function parse(argv: readonly string[]): Options {
  const common = scenarioOptions(argv, 'routing-quality');
  const x = common.extra;
  // Quick and smoke runs: 5 s per policy, enough to see every policy serve, too few to rank them.
  const short = common.quick;
  return {
    quick: common.quick,
    smoke: common.smoke,
    out: common.out,
    durationS: nonNegative(x['duration-s'], 'duration-s') ?? (short ? 3 : 20),
    warmupS: nonNegative(x['warmup-s'], 'warmup-s') ?? (short ? 2 : 5),
    load: nonNegative(x.load, 'load') ?? 0.85,
    rate: nonNegative(x.rate, 'rate'),
    sessions: Math.max(1, Math.floor(nonNegative(x.sessions, 'sessions') ?? 40)),
    sessionShare: Math.min(1, nonNegative(x['session-share'], 'session-share') ?? 0.5),
    seed: nonNegative(x.seed, 'seed') ?? 1,
    policies: (x.policies ?? 'round-robin,least-load,session').split(',').filter((p) => p !== ''),
    routerArgs: (x['router-args'] ?? '').split(/\s+/).filter((a) => a !== ''),
  };
}

/** Measures the engines' real service time on a throw-away fleet. */
async function calibrate(): Promise<number[]> {
  const engines = await startSimulatedFleet(MODEL);
  try {
    return await measureServiceMs(engines, MODEL);
  } finally {
    await closeSimulatedFleet(engines);
  }
}

/** Entry point; returns the exit code. */
export async function routingQuality(argv: readonly string[]): Promise<number> {
  const options = parse(argv);
  const measuredServiceMs = await calibrate();
  const capacityPerS = fleetCapacityPerS(FLEET, measuredServiceMs);
  const ratePerS = options.rate ?? Math.round(options.load * capacityPerS);
  const lengthMs = (options.warmupS + options.durationS) * 1000;
  const schedule = poissonSchedule({ ratePerS, lengthMs, sessionShare: options.sessionShare, sessions: options.sessions, seed: options.seed });
  const scenario: ScenarioFacts = {
    fleet: FLEET,
    nominalServiceMs: FLEET.map(nominalServiceMs),
    measuredServiceMs,
    capacityPerS,
    ratePerS,
    arrivals: schedule.length,
    warmupS: options.warmupS,
    durationS: options.durationS,
    sessionShare: options.sessionShare,
    sessions: options.sessions,
    seed: options.seed,
  };
  console.error(`fleet capacity ${capacityPerS.toFixed(1)} req/s; offering ${ratePerS} req/s, ${schedule.length} arrivals per policy`);

  const results: PolicyResult[] = [];
  for (const policy of options.policies) {
    const result = await runPolicy({
      policy,
      fleet: FLEET,
      model: MODEL,
      schedule,
      warmupMs: options.warmupS * 1000,
      lengthMs,
      scrapeIntervalMs: SCRAPE_INTERVAL_MS,
      samplePeriodMs: SAMPLE_PERIOD_MS,
      routerArgs: options.routerArgs,
    });
    results.push(result);
    console.error(`${policy}: TTFT p50 ${result.ttftMs.p50.toFixed(1)} ms, p99 ${result.ttftMs.p99.toFixed(1)} ms, errors ${result.errors}, shed ${result.shed}, drain ${(result.drainMs / 1000).toFixed(1)} s`);
  }

  const facts = runFacts(`npm run bench:routing${argv.length > 0 ? ` -- ${argv.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}` : ''}`);
  const bars = judge(results);
  writeResults(options, 'routing-quality', facts, { options, scenario, results, bars: bars.list }, markdown(results, scenario, facts, bars.markdown(options)), [ttftChart(results)]);
  // Quick and smoke runs leave the policy comparison unjudged (results.ts Bars): a few seconds on a shared machine cannot rank policies.
  return bars.pass(options) ? 0 : 1;
}

runIfMain(import.meta.url, routingQuality);

/**
 * `npm run bench:routing`: routing quality of each policy on a heterogeneous
 * fleet. Four in-process simulated engines (slots 8/8/4/2, the small ones
 * slower) take a seeded open-loop Poisson mix of conversation turns and
 * one-shot streams through a router child process, once per policy with the
 * same arrivals. Prints a Markdown table, writes JSON and Markdown under
 * loadtest/results/, and exits 1 when a request failed (a 429 with
 * Retry-After counts as shed, not failed) or least-load did not beat
 * round-robin on p99 TTFT without shedding more (see report.ts verdict()).
 */
import { fileURLToPath } from 'node:url';
import { closeSimulatedFleet, FLEET, fleetCapacityPerS, measureServiceMs, nominalServiceMs, startSimulatedFleet } from './fleet.ts';
import { poissonSchedule } from './poisson.ts';
import { markdown, verdict, type ScenarioFacts } from './report.ts';
import { runFacts, runIfMain, writeResults } from './results.ts';
import { runPolicy, type PolicyResult } from './run-policy.ts';

const USAGE = `Usage: node loadtest/scenarios/routing-quality.ts [options]

  --duration-s N       measured seconds per policy (default 20)
  --warmup-s N         unmeasured seconds before that, so the router learns capacities (default 5)
  --quick              short run: --duration-s 3 --warmup-s 2
  --smoke              --quick, and the exit code reflects failed requests only (for CI)
  --load F             offered rate as a share of measured fleet capacity (default 0.85)
  --rate N             offered rate in requests/s (overrides --load)
  --sessions N         distinct conversations (default 40)
  --session-share F    share of requests that carry a session key (default 0.5)
  --seed N             arrival schedule seed (default 1)
  --policies LIST      comma-separated (default round-robin,least-load,session)
  --router-args "..."  extra router flags, space-separated (e.g. "--admission-queue-length 1000")
  --out DIR            results directory (default loadtest/results)
`;

const MODEL = 'routing-bench';
/** Router scrape period: four scrapes a second, fast enough to see a queue form. */
const SCRAPE_INTERVAL_MS = 250;
const SAMPLE_PERIOD_MS = 100;

interface Options {
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
  /** Exit code from failed requests only. */
  smoke: boolean;
}

function parse(argv: readonly string[]): Options | undefined {
  const options: Options = {
    durationS: 20,
    warmupS: 5,
    load: 0.85,
    rate: undefined,
    sessions: 40,
    sessionShare: 0.5,
    seed: 1,
    policies: ['round-robin', 'least-load', 'session'],
    routerArgs: [],
    out: fileURLToPath(new URL('../results', import.meta.url)),
    smoke: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    if (flag === '--help' || flag === '-h') return undefined;
    // It prints one line per policy, never a live line: quiet is its only mode.
    if (flag === '--quiet') continue;
    if (flag === '--quick' || flag === '--smoke') {
      options.durationS = 3;
      options.warmupS = 2;
      if (flag === '--smoke') options.smoke = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    const number = Number(value);
    if (flag === '--policies') options.policies = value.split(',').filter((p) => p !== '');
    else if (flag === '--out') options.out = value;
    else if (flag === '--router-args') options.routerArgs = value.split(/\s+/).filter((a) => a !== '');
    else if (!Number.isFinite(number) || number < 0) throw new Error(`${flag}: expected a non-negative number, got ${JSON.stringify(value)}`);
    else if (flag === '--duration-s') options.durationS = number;
    else if (flag === '--warmup-s') options.warmupS = number;
    else if (flag === '--load') options.load = number;
    else if (flag === '--rate') options.rate = number;
    else if (flag === '--sessions') options.sessions = Math.max(1, Math.floor(number));
    else if (flag === '--session-share') options.sessionShare = Math.min(1, number);
    else if (flag === '--seed') options.seed = number;
    else throw new Error(`unknown flag ${flag} (see --help)`);
  }
  return options;
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
  if (options === undefined) {
    console.log(USAGE);
    return 0;
  }
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
  const outcome = verdict(results);
  const report = markdown(results, scenario, facts, outcome);
  writeResults(options.out, 'routing-quality', facts, { options, scenario, results, verdict: outcome }, report);
  // CI smoke: only failed requests decide; which policy wins in a 3 s window on a shared machine proves nothing.
  if (options.smoke) return results.every((r) => r.errors === 0) ? 0 : 1;
  return outcome.pass ? 0 : 1;
}

runIfMain(import.meta.url, routingQuality);

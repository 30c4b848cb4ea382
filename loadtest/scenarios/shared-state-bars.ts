/**
 * The shared-state benchmark's bars (issue: "Replicas that agree"), each
 * checked from the runs with its measured value. A bar whose feature the
 * routers do not have yet (no shared-state gauge, keys not enforced, the
 * moves metric absent) fails and says why; a part the plan did not run
 * (smoke) fails as "not run". Neither is ever a pass.
 */
import { atMostShareAbove, shedAgrees, shedNoise } from './shared-state-figures.ts';
import type { LeastLoadSummary } from './shared-state-least-load.ts';
import { QUOTA } from './shared-state-plan.ts';
import type { QuotaRun } from './shared-state-quota.ts';
import type { SharedStateWiring } from './shared-state-rig.ts';
import type { RunResult } from './shared-state-run.ts';
import type { BusyRunResult, CalmRun } from './shared-state-session-runs.ts';
import type { Convergence } from './shared-state-watch.ts';
import { Bars, pct, ms } from './results.ts';

/** Stickiness with Redis, at one and three replicas. */
export const STICKINESS_BAR = 0.995;
/** Least-load with three replicas against one router. */
export const LEAST_LOAD_SHARE = 0.1;
/** 429s of the outage run against the run without Redis. */
export const SHED_SHARE = 0.05;

/** Everything the scenario measured. */
export interface SharedStateRuns {
  readonly calm: readonly CalmRun[];
  readonly busy: readonly BusyRunResult[];
  readonly leastLoad: readonly LeastLoadSummary[];
  readonly quota: readonly QuotaRun[];
}

const NOT_RUN = 'not run in this mode';

/** Why runs "with Redis" were not really with shared state; undefined when every one formed its fleet. */
export function wiringProblem(runs: readonly Pick<RunResult<unknown>, 'redis' | 'wiring'>[]): string | undefined {
  const wirings = new Set<SharedStateWiring>(runs.filter((r) => r.redis).map((r) => r.wiring));
  if (wirings.has('absent')) return 'shared state not in use: the routers export no switchyard_shared_state_up';
  if (wirings.has('unformed')) return 'the replicas never all reported the shared state up and the whole fleet';
  return undefined;
}

/** Failures that are the router's fault whatever the setup: 5xx, resets, refused connections, timeouts, broken streams. */
export function serverFailures(kinds: Readonly<Record<string, number>>): number {
  return Object.entries(kinds).reduce((n, [kind, count]) => (/^status [0-9]{3}$/.test(kind) && !kind.startsWith('status 5') ? n : n + count), 0);
}

function stickinessBars(bars: Bars, calm: readonly CalmRun[]): void {
  for (const replicas of [1, 3]) {
    const name = `${replicas === 1 ? 'one replica' : 'three replicas'}, Redis, 50% load, a fifth engine joining halfway: ≥ ${(STICKINESS_BAR * 100).toFixed(1)}% of conversations on one engine`;
    const withRedis = calm.find((c) => c.run.replicas === replicas && c.run.redis);
    const without = calm.find((c) => c.run.replicas === replicas && !c.run.redis);
    if (withRedis === undefined) {
      bars.check('performance', name, false, NOT_RUN);
      continue;
    }
    const problem = wiringProblem([withRedis.run]);
    const share = withRedis.stickiness.share;
    const join = withRedis.join === undefined ? '' : `; ${withRedis.join.moved} of ${withRedis.join.existing} existing conversations moved after the join`;
    const contrast = without === undefined ? '' : ` (without Redis: ${(without.stickiness.share * 100).toFixed(1)}%)`;
    bars.check('performance', name, problem === undefined && share >= STICKINESS_BAR, `${(share * 100).toFixed(1)}% of ${withRedis.stickiness.conversations}${join}${contrast}${problem === undefined ? '' : `; ${problem}`}`);
  }
}

function busyBars(bars: Bars, busy: readonly BusyRunResult[]): void {
  const name = '85% load, three replicas, Redis: every conversation that changed engine is a move the routers counted (switchyard_session_moves_total)';
  const redis = busy.find((b) => b.kind === 'redis');
  if (redis === undefined) {
    bars.check('performance', name, false, NOT_RUN);
  } else {
    const problem = wiringProblem([redis.run]) ?? (redis.run.moves === undefined ? 'no replica exports switchyard_session_moves_total' : undefined);
    const counted = redis.run.moves ?? 0;
    bars.check('performance', name, problem === undefined && redis.stickiness.minMoves <= counted, `${redis.stickiness.changedEngine} conversations changed engine (≥ ${redis.stickiness.minMoves} moves); ${redis.run.moves ?? 'no'} moves counted${problem === undefined ? '' : `; ${problem}`}`);
  }
  const outage = busy.find((b) => b.kind === 'outage');
  const off = busy.find((b) => b.kind === 'off');
  const failed = outage === undefined ? undefined : outage.run.measurement.run.failed;
  bars.check(
    'correctness',
    'Redis killed, restarted and paused mid-run (85% load, three replicas): zero 5xx, zero resets, no broken stream',
    failed === 0,
    outage === undefined ? NOT_RUN : `${failed} failed${failed === 0 ? '' : ` (${Object.entries(outage.run.measurement.run.failureKinds).map(([k, n]) => `${k} ${n}`).join(', ')})`}`,
  );
  if (outage === undefined || off === undefined) {
    bars.check('performance', `Redis outage: 429s within ${pct(SHED_SHARE)} of the same run without Redis, or within the runs' counting noise (2 standard errors)`, false, NOT_RUN);
  } else {
    const a = outage.run.measurement.run;
    const b = off.run.measurement.run;
    const share = (r: { shed: number; measured: number }) => `${r.shed} of ${r.measured} (${((r.shed / Math.max(1, r.measured)) * 100).toFixed(2)}%)`;
    // The run with Redis and no outage shows how far two runs differ with nothing taken away.
    const steady = busy.find((x) => x.kind === 'redis')?.run.measurement.run;
    // A 5% bar cannot be read off a few dozen 429s: a difference inside the counting noise is no difference shown.
    const noise = shedNoise(a, b);
    const within = shedAgrees(a, b, SHED_SHARE);
    const inNoise = Math.abs(a.shed / Math.max(1, a.measured) - b.shed / Math.max(1, b.measured)) <= noise;
    bars.check(
      'performance',
      `Redis outage: 429s within ${pct(SHED_SHARE)} of the same run without Redis, or within the runs' counting noise (2 standard errors)`,
      within || inNoise,
      `${share(a)} vs ${share(b)} without Redis (${within ? 'within 5%' : inNoise ? `not within 5%, within the noise of ±${(noise * 100).toFixed(2)} points` : `outside 5% and the noise of ±${(noise * 100).toFixed(2)} points`})${steady === undefined ? '' : `; with Redis and no outage ${share(steady)}`}`,
    );
  }
  const converged = outage?.run.during;
  const problem = outage === undefined ? undefined : wiringProblem([outage.run]);
  bars.check(
    'performance',
    'Redis outage: every replica back up and agreeing on the fleet, for good, after the restart (before the pause) and after the pause (before the run ended)',
    converged !== undefined && problem === undefined && converged.afterRestart.settledMs !== undefined && converged.afterResume.settledMs !== undefined,
    converged === undefined ? NOT_RUN : `after restart ${convergenceText(converged.afterRestart)}; after SIGCONT ${convergenceText(converged.afterResume)}${problem === undefined ? '' : `; ${problem}`}`,
  );
}

/** "first 120 ms, settled 900 ms", or what never happened. */
export function convergenceText(c: Convergence): string {
  if (c.firstMs === undefined) return 'never agreed';
  const first = `${ms(c.firstMs)} ms`;
  if (c.settledMs === undefined) return `agreed after ${first}, fell apart again and never settled`;
  return c.settledMs === c.firstMs ? first : `first ${first}, settled ${ms(c.settledMs)} ms`;
}

function leastLoadBars(bars: Bars, summaries: readonly LeastLoadSummary[]): void {
  const one = summaries.find((s) => s.config.replicas === 1 && s.config.redis);
  const three = summaries.find((s) => s.config.replicas === 3 && s.config.redis);
  const figures = [
    { what: 'time-averaged engine waiting (max ÷ mean)', pick: (s: LeastLoadSummary) => s.imbalance, format: (n: number) => n.toFixed(2) },
    { what: 'TTFT p99', pick: (s: LeastLoadSummary) => s.ttftP99, format: (n: number) => `${ms(n)} ms` },
  ];
  for (const figure of figures) {
    const name = `least-load, three replicas with Redis at 85%: ${figure.what} within ${pct(LEAST_LOAD_SHARE)} of one router (median of rounds)`;
    if (one === undefined || three === undefined || three.runs.length === 0) {
      bars.check('performance', name, false, NOT_RUN);
      continue;
    }
    const problem = wiringProblem(three.runs);
    const a = figure.pick(three);
    const b = figure.pick(one);
    const offThree = summaries.find((s) => s.config.replicas === 3 && !s.config.redis);
    const contrast = offThree === undefined ? '' : `; without Redis ${figure.format(figure.pick(offThree).median)}`;
    bars.check('performance', name, problem === undefined && atMostShareAbove(a.median, b.median, LEAST_LOAD_SHARE), `${figure.format(a.median)} [${figure.format(a.min)}–${figure.format(a.max)}] vs ${figure.format(b.median)} [${figure.format(b.min)}–${figure.format(b.max)}], ${a.runs} rounds${contrast}${problem === undefined ? '' : `; ${problem}`}`);
  }
}

/** Why a quota run cannot show quotas; undefined when keys were enforced. */
function quotaProblem(run: QuotaRun): string | undefined {
  if (run.error !== undefined) return `run failed: ${run.error}`;
  if (run.auth === undefined) return 'no authentication probe';
  if (run.auth.withoutKey !== 401) return `keys not enforced (a request without a key got ${run.auth.withoutKey}, not 401)`;
  if (run.auth.withKey !== 200) return `the key was not accepted (${run.auth.withKey})`;
  return run.run === undefined ? undefined : wiringProblem([run.run]);
}

function quotaBars(bars: Bars, quota: readonly QuotaRun[]): void {
  const { limitPerS, offeredPerS, tolerancePerS } = QUOTA;
  const describe = (run: QuotaRun) => {
    const m = run.run?.measurement.run;
    return m === undefined ? '' : `${run.admittedPerS.toFixed(1)} req/s admitted, ${((m.shed * 1000) / m.windowMs).toFixed(1)} req/s 429${m.failed > 0 ? `, ${m.failed} failed` : ''}`;
  };
  const shared = quota.find((q) => q.mode === 'shared');
  const sharedName = `quota: one key limited to ${limitPerS} req/s offering ${offeredPerS} through three replicas with Redis gets ${limitPerS} ± ${tolerancePerS} admitted`;
  if (shared === undefined) bars.check('performance', sharedName, false, NOT_RUN);
  else {
    const problem = quotaProblem(shared);
    bars.check('performance', sharedName, problem === undefined && Math.abs(shared.admittedPerS - limitPerS) <= tolerancePerS, [describe(shared), problem].filter(Boolean).join('; '));
  }
  const degraded = quota.find((q) => q.mode === 'degraded');
  const degradedName = `quota with Redis down (degraded, every replica): at most ${limitPerS} req/s admitted`;
  if (degraded === undefined) bars.check('performance', degradedName, false, NOT_RUN);
  else {
    const down = degraded.degradedReplicas === 3 ? undefined : `${degraded.degradedReplicas ?? 0} of 3 replicas reported Redis down`;
    const problem = quotaProblem(degraded) ?? down;
    // Rounded to whole requests per second: a limit is not broken by the fraction a window edge adds.
    bars.check('performance', degradedName, problem === undefined && Math.round(degraded.admittedPerS) <= limitPerS, [describe(degraded), problem].filter(Boolean).join('; '));
  }
  const failures = quota.reduce((n, q) => n + serverFailures(q.run?.measurement.run.failureKinds ?? {}), 0);
  bars.check('correctness', 'quota runs: no 5xx, resets or broken streams', quota.length > 0 && failures === 0, quota.length === 0 ? NOT_RUN : `${failures}`);
}

/** Checks every bar. */
export function checkBars(runs: SharedStateRuns): Bars {
  const bars = new Bars();
  const plain = [...runs.calm.map((c) => c.run), ...runs.busy.filter((b) => b.kind !== 'outage').map((b) => b.run), ...runs.leastLoad.flatMap((s) => s.runs)];
  const failed = plain.reduce((n, r) => n + r.measurement.run.failed, 0);
  bars.check('correctness', 'no failed request in the session and least-load runs, with and without Redis', plain.length > 0 && failed === 0, plain.length === 0 ? NOT_RUN : `${failed} failed of ${plain.reduce((n, r) => n + r.measurement.run.measured, 0)}`);
  stickinessBars(bars, runs.calm);
  busyBars(bars, runs.busy);
  leastLoadBars(bars, runs.leastLoad);
  quotaBars(bars, runs.quota);
  return bars;
}

/**
 * The prefix-affinity benchmark's bars and Markdown tables. The bars are
 * what prefix affinity must meet to be the default: find the engines'
 * caches on keyless chat (A) at one and three replicas while least-load
 * cannot, and halve its tail; find shared documents (B) and cut their tail
 * at 70% and not lengthen it at 120%; cost nothing where there is no reuse
 * (D) or where balance matters more than reuse (E); and not pile a prompt
 * everyone shares onto a few engines (C). Each is judged on the median of
 * the rounds run, with the range shown.
 */
import { Bars, ms, pct, ratio } from './results.ts';
import { rowValid, type RowResult } from './prefix-runner.ts';
import { sharesRedis, type RouterName } from './prefix-targets.ts';
import type { WorkloadName } from './prefix-workloads.ts';

/** A row and the load it ran at. */
export interface LoadedRow extends RowResult {
  /** Offered load as a share of least-load's capacity on this workload. */
  readonly load: number;
  /** Offered requests per second. */
  readonly ratePerS: number;
  /** The round it ran in (1-based): every round runs every row, so rounds interleave. */
  readonly round: number;
}

/** One setup's rows over the rounds: the medians the bars judge, and their ranges. */
export interface RoundsSummary {
  readonly workload: WorkloadName;
  readonly load: number;
  readonly router: RouterName;
  readonly replicas: number;
  readonly rounds: number;
  /** Every round's row had a core below the busy limit. */
  readonly valid: boolean;
  readonly hit: Spread;
  readonly ttftP99: Spread;
  readonly runningImbalance: Spread;
}

/** A median and the range it came from. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The bar thresholds (issue: prefix affinity good enough to be the default). */
export const BARS = {
  /** Prefix affinity's hit ratio on A, at every replica count and load. */
  minAffinityHitA: 0.85,
  /** Least-load's hit ratio on A must stay below this: otherwise the workload leaves affinity nothing to win. */
  maxLeastLoadHitA: 0.6,
  /** Prefix affinity's TTFT p99 as a share of least-load's on A. */
  maxTtftP99ShareA: 0.5,
  /** Prefix affinity's hit ratio on B (shared documents). */
  minAffinityHitB: 0.75,
  /** Prefix affinity's TTFT p99 as a share of least-load's on B, up to capacity and past it. */
  maxTtftP99ShareB: 0.7,
  maxTtftP99ShareBOverload: 1.0,
  /** The same on D (no reuse) and E (a short common prefix), where balance matters more than reuse. */
  maxTtftP99ShareDE: 1.1,
  /** Time-averaged max/mean running across engines on C. */
  maxRunningImbalanceC: 1.5,
} as const;

/** The setups the bars hold to: switchyard's prefix affinity, alone or sharing placements through Redis. */
const JUDGED: readonly RouterName[] = ['prefix-affinity', 'prefix-affinity-redis'];

const key = (row: { workload: string; load: number; replicas: number }) => `${row.workload}|${row.load}|${row.replicas}`;

function where(row: RoundsSummary): string {
  return `${row.workload} at ${pct(row.load)}, ${row.replicas} replica${row.replicas === 1 ? '' : 's'}${sharesRedis(row.router) ? ', Redis' : ''}`;
}

/** The finite values' median (the mean of the middle two for an even count) and range; NaN for none (a row that served nothing has no p99). */
function spreadOf(values: readonly number[]): Spread {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted.at(-1) as number };
}

/** Each setup's rounds, in the order the setups first ran; rows that could not run are left out. */
export function summarizeRounds(rows: readonly LoadedRow[]): RoundsSummary[] {
  const groups = new Map<string, LoadedRow[]>();
  for (const r of rows) {
    if (r.unavailable !== undefined) continue;
    const k = `${key(r)}|${r.router}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()].map((runs) => {
    const first = runs[0] as LoadedRow;
    return {
      workload: first.workload,
      load: first.load,
      router: first.router,
      replicas: first.replicas,
      rounds: runs.length,
      valid: runs.every(rowValid),
      hit: spreadOf(runs.map((r) => r.hitRatio)),
      ttftP99: spreadOf(runs.map((r) => r.window.ttftP99)),
      runningImbalance: spreadOf(runs.map((r) => r.running.maxOverMean)),
    };
  });
}

/** A median with its range when there was more than one round. */
function shown(spread: Spread, format: (n: number) => string, rounds: number): string {
  return rounds > 1 ? `${format(spread.median)} [${format(spread.min)}-${format(spread.max)}]` : format(spread.median);
}

const twoDigits = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

function invalidNote(...rows: (RoundsSummary | undefined)[]): string {
  const bad = rows.filter((r): r is RoundsSummary => r !== undefined && !r.valid);
  return bad.length === 0 ? '' : ` (invalid: a core above 80% busy in ${bad.map((r) => r.router).join(', ')})`;
}

/** Checks every bar the rows allow, on each setup's median over the rounds; a bar whose rows are missing is not checked, an invalid row fails its bar. */
export function judge(rows: readonly LoadedRow[]): Bars {
  const bars = new Bars();
  const failed = rows.reduce((n, r) => n + r.window.failed, 0);
  const kinds = new Map<string, number>();
  for (const r of rows) for (const [kind, n] of Object.entries(r.window.failures)) kinds.set(`${r.router}: ${kind}`, (kinds.get(`${r.router}: ${kind}`) ?? 0) + n);
  bars.check('correctness', 'no failed requests (a 429 is shed, not failed)', failed === 0, failed === 0 ? '0 failed' : `${failed} failed (${[...kinds].slice(0, 4).map(([k, n]) => `${k} ×${n}`).join('; ')})`);
  const summaries = summarizeRounds(rows);
  const find = (router: RouterName, like: RoundsSummary) => summaries.find((s) => s.router === router && key(s) === key(like));
  for (const row of summaries.filter((s) => JUDGED.includes(s.router))) {
    // Redis shares the fleet's load too: the fair baseline of a Redis row is least-load with Redis.
    const leastLoad = (row.router === 'prefix-affinity-redis' ? find('least-load-redis', row) : undefined) ?? find('least-load', row);
    const oracle = summaries.find((s) => s.router === 'oracle' && s.workload === row.workload && s.load === row.load);
    const valid = row.valid && (leastLoad === undefined || leastLoad.valid);
    const note = invalidNote(row, leastLoad);
    const hit = (r: RoundsSummary | undefined) => (r === undefined ? 'not run' : shown(r.hit, twoDigits, r.rounds));
    if (row.workload === 'A') {
      bars.check(
        'performance',
        `A: prefix-affinity hit ratio ≥ ${BARS.minAffinityHitA}, least-load ≤ ${BARS.maxLeastLoadHitA} (${where(row)})`,
        valid && row.hit.median >= BARS.minAffinityHitA && (leastLoad === undefined || leastLoad.hit.median <= BARS.maxLeastLoadHitA),
        `prefix-affinity ${hit(row)}, least-load ${hit(leastLoad)}, oracle ${hit(oracle)}${note}`,
      );
    }
    if (row.workload === 'B') {
      bars.check('performance', `B: prefix-affinity hit ratio ≥ ${BARS.minAffinityHitB} (${where(row)})`, row.valid && row.hit.median >= BARS.minAffinityHitB, `prefix-affinity ${hit(row)}, least-load ${hit(leastLoad)}, oracle ${hit(oracle)}${invalidNote(row)}`);
    }
    if (leastLoad === undefined) continue;
    const share = row.ttftP99.median / leastLoad.ttftP99.median;
    const p99s = `${shown(row.ttftP99, ms, row.rounds)} vs ${shown(leastLoad.ttftP99, ms, leastLoad.rounds)} ms (${ratio(share)})`;
    const limit = row.workload === 'A' ? BARS.maxTtftP99ShareA : row.workload === 'B' ? (row.load > 1 ? BARS.maxTtftP99ShareBOverload : BARS.maxTtftP99ShareB) : row.workload === 'D' || row.workload === 'E' ? BARS.maxTtftP99ShareDE : undefined;
    if (limit !== undefined) bars.check('performance', `${row.workload}: prefix-affinity TTFT p99 ≤ ${limit}× least-load (${where(row)})`, valid && share <= limit, `${p99s}${note}`);
    if (row.workload === 'C') {
      bars.check(
        'performance',
        `C: prefix-affinity time-averaged max/mean running ≤ ${BARS.maxRunningImbalanceC} (${where(row)})`,
        row.valid && row.runningImbalance.median <= BARS.maxRunningImbalanceC,
        `${shown(row.runningImbalance, twoDigits, row.rounds)} (least-load ${shown(leastLoad.runningImbalance, twoDigits, leastLoad.rounds)})${invalidNote(row)}`,
      );
    }
  }
  return bars;
}

/** The medians over the rounds, one line per setup. */
export function roundsTable(rows: readonly LoadedRow[]): string {
  const lines = ['| workload | load | router | replicas | rounds | hit ratio median [range] | TTFT p99 ms median [range] | running max/mean median [range] | valid |', '|---|---|---|---|---|---|---|---|---|'];
  for (const s of summarizeRounds(rows)) {
    lines.push(`| ${s.workload} | ${pct(s.load)} | ${s.router} | ${s.router === 'oracle' ? '-' : s.replicas} | ${s.rounds} | ${shown(s.hit, twoDigits, s.rounds)} | ${shown(s.ttftP99, ms, s.rounds)} | ${shown(s.runningImbalance, twoDigits, s.rounds)} | ${s.valid ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}

const num = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The results table, one line per row, grouped by workload and load. */
export function table(rows: readonly LoadedRow[]): string {
  const lines = [
    '| round | workload | load | router | replicas | shedding | offered req/s | sent | served | shed | failed | hit ratio | TTFT p50 ms | TTFT p99 ms | running max/mean | mean running | busiest core | router CPU µs/req | valid |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const head = `| ${r.round} | ${r.workload} | ${pct(r.load)} | ${r.router} | ${r.router === 'oracle' ? '-' : r.replicas} | ${r.shedding ? 'on' : 'off'} | ${r.ratePerS.toFixed(1)} |`;
    if (r.unavailable !== undefined) {
      lines.push(`${head} unavailable: ${r.unavailable.replace(/\|/g, '/')} |${' |'.repeat(11)}`);
      continue;
    }
    const w = r.window;
    const busiest = Math.max(...r.coreBusy.filter((b) => Number.isFinite(b)));
    lines.push(
      `${head} ${w.sent} | ${w.served} | ${w.shed} | ${w.failed} | ${num(r.hitRatio)} | ${ms(w.ttftP50)} | ${ms(w.ttftP99)} | ${num(r.running.maxOverMean)} | ${num(r.running.meanRunning, 1)} | ${Number.isFinite(busiest) ? pct(busiest) : '-'} | ${r.routerCpuUsPerRequest === undefined ? '-' : r.routerCpuUsPerRequest.toFixed(0)} | ${rowValid(r) ? 'yes' : '**no**'} |`,
    );
  }
  return lines.join('\n');
}

/** The workloads' one-line descriptions, for the report. */
export function workloadLines(descriptions: Readonly<Partial<Record<WorkloadName, string>>>): string {
  return Object.entries(descriptions)
    .map(([name, text]) => `- ${name}: ${text}`)
    .join('\n');
}

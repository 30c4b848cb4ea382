/**
 * The prefix-affinity benchmark's bars and Markdown table. The bars come
 * from the issue: prefix affinity must find the engines' caches on keyless
 * chat (A) at one and three replicas while least-load cannot, cut the tail
 * time to first token in half where there is reuse (A, B), cost little where
 * there is none (D), and not pile a prompt everyone shares onto a few
 * engines (C).
 */
import { Bars, ms, pct, ratio } from './results.ts';
import { rowValid, type RowResult } from './prefix-runner.ts';
import type { RouterName } from './prefix-targets.ts';
import type { WorkloadName } from './prefix-workloads.ts';

/** A row and the load it ran at. */
export interface LoadedRow extends RowResult {
  /** Offered load as a share of least-load's capacity on this workload. */
  readonly load: number;
  /** Offered requests per second. */
  readonly ratePerS: number;
}

/** The bar thresholds. */
export const BARS = {
  /** Prefix affinity's hit ratio on A, at every replica count and load. */
  minAffinityHitA: 0.85,
  /** Least-load's hit ratio on A must stay below this: otherwise the workload leaves affinity nothing to win. */
  maxLeastLoadHitA: 0.6,
  /** Prefix affinity's TTFT p99 as a share of least-load's on A and B. */
  maxTtftP99ShareAB: 0.5,
  /** The same on D, where there is no reuse to win. */
  maxTtftP99ShareD: 1.1,
  /** Time-averaged max/mean running across engines on C. */
  maxRunningImbalanceC: 1.5,
} as const;

const key = (row: LoadedRow) => `${row.workload}|${row.load}|${row.replicas}`;

function find(rows: readonly LoadedRow[], router: RouterName, like: LoadedRow): LoadedRow | undefined {
  return rows.find((r) => r.router === router && key(r) === key(like) && r.unavailable === undefined);
}

function where(row: LoadedRow): string {
  return `${row.workload} at ${pct(row.load)}, ${row.replicas} replica${row.replicas === 1 ? '' : 's'}`;
}

function invalidNote(...rows: (LoadedRow | undefined)[]): string {
  const bad = rows.filter((r): r is LoadedRow => r !== undefined && !rowValid(r));
  return bad.length === 0 ? '' : ` (invalid: a core above 80% busy in ${bad.map((r) => r.router).join(', ')})`;
}

/** Checks every bar the rows allow; a bar whose rows are missing is not checked, an invalid row fails its bar. */
export function judge(rows: readonly LoadedRow[]): Bars {
  const bars = new Bars();
  const failed = rows.reduce((n, r) => n + r.window.failed, 0);
  const kinds = new Map<string, number>();
  for (const r of rows) for (const [kind, n] of Object.entries(r.window.failures)) kinds.set(`${r.router}: ${kind}`, (kinds.get(`${r.router}: ${kind}`) ?? 0) + n);
  bars.check('correctness', 'no failed requests (a 429 is shed, not failed)', failed === 0, failed === 0 ? '0 failed' : `${failed} failed (${[...kinds].slice(0, 4).map(([k, n]) => `${k} ×${n}`).join('; ')})`);
  const affinity = rows.filter((r) => r.router === 'prefix-affinity' && r.unavailable === undefined);
  for (const row of affinity) {
    const leastLoad = find(rows, 'least-load', row);
    const oracle = rows.find((r) => r.router === 'oracle' && r.workload === row.workload && r.load === row.load && r.unavailable === undefined);
    const valid = rowValid(row) && (leastLoad === undefined || rowValid(leastLoad));
    const note = invalidNote(row, leastLoad);
    if (row.workload === 'A') {
      bars.check(
        'performance',
        `A: prefix-affinity hit ratio ≥ ${BARS.minAffinityHitA}, least-load ≤ ${BARS.maxLeastLoadHitA} (${where(row)})`,
        valid && row.hitRatio >= BARS.minAffinityHitA && (leastLoad === undefined || leastLoad.hitRatio <= BARS.maxLeastLoadHitA),
        `prefix-affinity ${row.hitRatio.toFixed(2)}, least-load ${leastLoad?.hitRatio.toFixed(2) ?? 'not run'}, oracle ${oracle?.hitRatio.toFixed(2) ?? 'not run'}${note}`,
      );
    }
    if (leastLoad === undefined) continue;
    const share = row.window.ttftP99 / leastLoad.window.ttftP99;
    const p99s = `${ms(row.window.ttftP99)} vs ${ms(leastLoad.window.ttftP99)} ms (${ratio(share)})`;
    if (row.workload === 'A' || row.workload === 'B') {
      bars.check('performance', `${row.workload}: prefix-affinity TTFT p99 ≤ ${BARS.maxTtftP99ShareAB}× least-load (${where(row)})`, valid && share <= BARS.maxTtftP99ShareAB, `${p99s}${note}`);
    }
    if (row.workload === 'D') {
      bars.check('performance', `D: prefix-affinity TTFT p99 ≤ ${BARS.maxTtftP99ShareD}× least-load (${where(row)})`, valid && share <= BARS.maxTtftP99ShareD, `${p99s}${note}`);
    }
  }
  for (const row of affinity.filter((r) => r.workload === 'C')) {
    bars.check(
      'performance',
      `C: prefix-affinity time-averaged max/mean running ≤ ${BARS.maxRunningImbalanceC} (${where(row)})`,
      rowValid(row) && row.running.maxOverMean <= BARS.maxRunningImbalanceC,
      `${row.running.maxOverMean.toFixed(2)} (least-load ${find(rows, 'least-load', row)?.running.maxOverMean.toFixed(2) ?? 'not run'})${invalidNote(row)}`,
    );
  }
  return bars;
}

const num = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** The results table, one line per row, grouped by workload and load. */
export function table(rows: readonly LoadedRow[]): string {
  const lines = [
    '| workload | load | router | replicas | shedding | offered req/s | sent | served | shed | failed | hit ratio | TTFT p50 ms | TTFT p99 ms | running max/mean | mean running | busiest core | router CPU µs/req | valid |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const head = `| ${r.workload} | ${pct(r.load)} | ${r.router} | ${r.router === 'oracle' ? '-' : r.replicas} | ${r.shedding ? 'on' : 'off'} | ${r.ratePerS.toFixed(1)} |`;
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

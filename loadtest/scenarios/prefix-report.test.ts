import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runningBalance, summarizeWindow } from './prefix-metrics.ts';
import { judge, roundsTable, summarizeRounds, table, type LoadedRow } from './prefix-report.ts';
import type { RouterName } from './prefix-targets.ts';
import type { WorkloadName } from './prefix-workloads.ts';

function row(workload: WorkloadName, router: RouterName, figures: { hit?: number; p99?: number; imbalance?: number; busy?: number; replicas?: number; failed?: number; unavailable?: string; load?: number; round?: number } = {}): LoadedRow {
  const p99 = figures.p99 ?? 100;
  const failed = figures.failed ?? 0;
  return {
    workload,
    router,
    replicas: figures.replicas ?? 1,
    shedding: false,
    load: figures.load ?? 0.7,
    ratePerS: 50,
    round: figures.round ?? 1,
    ...(figures.unavailable === undefined ? {} : { unavailable: figures.unavailable }),
    description: '',
    window: { ...summarizeWindow([], 0, 1), sent: 10, served: 10 - failed, failed, failures: failed > 0 ? { 'status 502': failed } : {}, ttftP50: p99 / 2, ttftP99: p99 },
    hitRatio: figures.hit ?? 0.5,
    hitTokens: 0,
    queriedTokens: 0,
    engineRequests: 0,
    running: { ...runningBalance([]), maxOverMean: figures.imbalance ?? 1.1 },
    coreBusy: [figures.busy ?? 0.3, 0.2],
    routerCpuUsPerRequest: 100,
  };
}

const FULL = { quick: false, smoke: false } as const;
const SMOKE = { quick: true, smoke: true } as const;
const verdicts = (rows: LoadedRow[]) => judge(rows).list.map((b) => [b.name.split(' (')[0], b.pass]);

describe('prefix-affinity bars', () => {
  it('pass when prefix affinity finds the caches on A and B, halves their tails, and costs nothing on C, D and E', () => {
    const rows = [
      row('A', 'least-load', { hit: 0.45, p99: 400 }),
      row('A', 'prefix-affinity', { hit: 0.9, p99: 100 }),
      row('A', 'oracle', { hit: 0.92 }),
      row('B', 'least-load', { p99: 1000 }),
      row('B', 'prefix-affinity', { hit: 0.8, p99: 600 }),
      row('B', 'least-load', { p99: 1000, load: 1.2 }),
      row('B', 'prefix-affinity', { hit: 0.8, p99: 990, load: 1.2 }),
      row('C', 'least-load', { imbalance: 1.05 }),
      row('C', 'prefix-affinity', { imbalance: 1.3 }),
      row('D', 'least-load', { p99: 300 }),
      row('D', 'prefix-affinity', { p99: 320 }),
      row('E', 'least-load', { p99: 300 }),
      row('E', 'prefix-affinity-redis', { p99: 320, replicas: 3 }),
      row('E', 'least-load', { p99: 300, replicas: 3 }),
      row('E', 'least-load-redis', { p99: 300, replicas: 3 }),
    ];
    assert.ok(judge(rows).pass(FULL), judge(rows).markdown(FULL));
    assert.equal(judge(rows).list.length, 10);
  });

  it('fail on each miss: a low hit ratio, least-load hitting too, a slow tail, a hot spot on C, a costly D or E', () => {
    assert.deepEqual(verdicts([row('A', 'least-load', { hit: 0.45, p99: 400 }), row('A', 'prefix-affinity', { hit: 0.8, p99: 100 })]).slice(1), [
      ['A: prefix-affinity hit ratio ≥ 0.85, least-load ≤ 0.6', false],
      ['A: prefix-affinity TTFT p99 ≤ 0.5× least-load', true],
    ]);
    assert.equal(verdicts([row('A', 'least-load', { hit: 0.7 }), row('A', 'prefix-affinity', { hit: 0.9, p99: 10 })])[1]?.[1], false);
    assert.deepEqual(verdicts([row('B', 'least-load', { p99: 1000 }), row('B', 'prefix-affinity', { hit: 0.7, p99: 750 })]).slice(1), [
      ['B: prefix-affinity hit ratio ≥ 0.75', false],
      ['B: prefix-affinity TTFT p99 ≤ 0.7× least-load', false],
    ]);
    assert.equal(verdicts([row('B', 'least-load', { p99: 1000, load: 1.2 }), row('B', 'prefix-affinity', { hit: 0.8, p99: 1100, load: 1.2 })])[2]?.[1], false, 'past capacity: no longer than least-load');
    assert.equal(verdicts([row('C', 'least-load'), row('C', 'prefix-affinity', { imbalance: 1.6 })])[1]?.[1], false);
    assert.equal(verdicts([row('D', 'least-load', { p99: 300 }), row('D', 'prefix-affinity', { p99: 340 })])[1]?.[1], false);
    assert.equal(verdicts([row('E', 'least-load', { p99: 300 }), row('E', 'prefix-affinity', { p99: 340 })])[1]?.[1], false);
    const redis = [row('E', 'least-load', { p99: 300, replicas: 3 }), row('E', 'least-load-redis', { p99: 200, replicas: 3 }), row('E', 'prefix-affinity-redis', { p99: 250, replicas: 3 })];
    assert.deepEqual(judge(redis).list.map((b) => [b.pass, b.measured]), [[true, '0 failed'], [false, '250 vs 200 ms (1.25×)']], 'a Redis row against least-load with Redis, which shares the load too');
  });

  it('judge the median of the rounds and show the range', () => {
    const rows = [1, 2, 3].flatMap((round) => [row('D', 'least-load', { p99: 300, round }), row('D', 'prefix-affinity', { p99: [280, 900, 320][round - 1] as number, round })]);
    const [affinity] = summarizeRounds(rows).filter((s) => s.router === 'prefix-affinity');
    assert.deepEqual(affinity?.ttftP99, { median: 320, min: 280, max: 900 });
    assert.equal(affinity?.rounds, 3);
    const [, bar] = judge(rows).list;
    assert.equal(bar?.pass, true, 'one slow round out of three does not decide');
    assert.match(bar?.measured ?? '', /320 \[280-900\] vs 300 \[300-300\] ms/);
    assert.match(roundsTable(rows), /\| D \| 70% \| prefix-affinity \| 1 \| 3 \|/);
    const two = [1, 2].flatMap((round) => [row('D', 'prefix-affinity', { p99: [300, 400][round - 1] as number, round })]);
    assert.equal(summarizeRounds(two)[0]?.ttftP99.median, 350, 'two rounds: the mean of both');
    const slowInOne = [1, 2, 3].flatMap((round) => [row('D', 'least-load', { p99: 300, round }), row('D', 'prefix-affinity', { p99: 300, round, busy: round === 2 ? 0.9 : 0.3 })]);
    assert.equal(judge(slowInOne).list[1]?.pass, false, 'a round on a busy core makes the setup invalid');
  });

  it('fail a bar whose rows ran on a core above 80% busy; count failed requests in smoke runs too', () => {
    const busy = [row('A', 'least-load', { hit: 0.45, p99: 400 }), row('A', 'prefix-affinity', { hit: 0.9, p99: 100, busy: 0.95 })];
    assert.deepEqual(verdicts(busy).map(([, pass]) => pass), [true, false, false]);
    assert.match(judge(busy).list[1]?.measured ?? '', /invalid/);
    const failed = judge([row('A', 'least-load', { failed: 2 })]);
    assert.equal(failed.pass(SMOKE), false);
    // Performance bars do not decide smoke runs.
    assert.equal(judge(busy).pass(SMOKE), true);
  });

  it('skip rows that could not run, and keep every table line as wide as its header', () => {
    const rows = [row('A', 'prefix-affinity', { hit: 0.9, replicas: 3 }), row('A', 'least-load', { unavailable: 'exit 2 | bad flag', replicas: 3 }), row('A', 'smg', { unavailable: 'no wheel' })];
    assert.deepEqual(verdicts(rows).map(([name]) => name), ['no failed requests', 'A: prefix-affinity hit ratio ≥ 0.85, least-load ≤ 0.6']);
    const cells = table(rows)
      .split('\n')
      .map((line) => line.split('|').length);
    assert.ok(cells.every((n) => n === cells[0]), cells.join(','));
  });
});

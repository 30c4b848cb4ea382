/**
 * The shared-state benchmark's Markdown tables and SVG charts, from the
 * runs: stickiness at 50% (an engine joining halfway), conversations at 85%
 * (moves, an outage), least-load across replicas, quota accuracy, and what
 * Redis costs per request.
 */
import { lineChart } from '../report/svg-chart.ts';
import type { Chart } from './results.ts';
import { ms, pct, signedMs } from './results.ts';
import { relativeTo, spread, type Spread } from './shared-state-figures.ts';
import { configLabel, type LeastLoadSummary } from './shared-state-least-load.ts';
import { ENGINES, LATE_ENGINE, QUOTA, USERS } from './shared-state-plan.ts';
import { convergenceText, type SharedStateRuns } from './shared-state-bars.ts';
import type { RunResult } from './shared-state-run.ts';
import type { BusyRunResult, CalmRun } from './shared-state-session-runs.ts';

/** Facts of the setup the text states. */
export interface Setup {
  readonly capacityPerS: number;
  readonly calmPerS: number;
  readonly busyPerS: number;
}

const share1 = (n: number) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '-');
const fixed = (n: number | undefined, digits = 2) => (n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits));
const spreadText = (s: Spread, format: (n: number) => string) => (Number.isFinite(s.median) ? `${format(s.median)} [${format(s.min)}–${format(s.max)}]` : '-');

/** How the run's Redis took part, for a table cell. */
function redisCell(run: RunResult<unknown>): string {
  switch (run.wiring) {
    case 'off':
      return 'no';
    case 'formed':
      return `yes (fleet formed in ${ms(run.formedInMs ?? Number.NaN)} ms)`;
    case 'absent':
      return 'configured, **not used** (no shared-state gauge)';
    case 'unformed':
      return 'configured, fleet **never formed**';
  }
}

function movesCell(run: RunResult<unknown>): string {
  if (run.moves === undefined) return '- (no metric)';
  const reasons = Object.entries(run.movesByReason).filter(([, n]) => n > 0);
  return `${run.moves}${reasons.length === 0 ? '' : ` (${reasons.map(([r, n]) => `${r} ${n}`).join(', ')})`}`;
}

function calmTable(calm: readonly CalmRun[]): string[] {
  if (calm.length === 0) return ['_Not run in this mode._'];
  return [
    '| replicas | Redis | ok | 429 | failed | conversations on one engine | changed engine | existing conversations moved after the join (to the new engine) | new engine routable on every replica after | TTFT p50 / p99 ms | moves counted |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...calm.map(({ run, stickiness, join }) => {
      const m = run.measurement.run;
      const joined = run.during?.routableAfterMs;
      return `| ${run.replicas} | ${redisCell(run)} | ${m.ok} | ${m.shed} | ${m.failed} | ${share1(stickiness.share)} of ${stickiness.conversations} | ${stickiness.changedEngine} | ${join === undefined ? '-' : `${join.moved} of ${join.existing} (${join.movedToJoined})`} | ${joined === undefined ? 'never' : `${ms(joined)} ms`} | ${ms(run.measurement.ttft.p50)} / ${ms(run.measurement.ttft.p99)} | ${movesCell(run)} |`;
    }),
  ];
}

function busyTable(busy: readonly BusyRunResult[]): string[] {
  if (busy.length === 0) return ['_Not run in this mode._'];
  const name = { off: 'no Redis', redis: 'Redis', outage: 'Redis killed, restarted, paused' } as const;
  return [
    '| run | Redis | ok | 429 | failed | conversations on one engine | changed engine (≥ moves) | moves counted by the routers | TTFT p50 / p99 ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...busy.map(({ kind, run, stickiness }) => {
      const m = run.measurement.run;
      return `| ${name[kind]} | ${redisCell(run)} | ${m.ok} | ${m.shed} | ${m.failed} | ${share1(stickiness.share)} of ${stickiness.conversations} | ${stickiness.changedEngine} (≥ ${stickiness.minMoves}) | ${movesCell(run)} | ${ms(run.measurement.ttft.p50)} / ${ms(run.measurement.ttft.p99)} |`;
    }),
  ];
}

function outageText(busy: readonly BusyRunResult[]): string[] {
  const outage = busy.find((b) => b.kind === 'outage')?.run.during;
  if (outage === undefined) return [];
  const t = outage.times;
  const s = (n: number) => (n / 1000).toFixed(1);
  return [
    '',
    `Outage run: Redis killed at ${s(t.kill)} s, restarted (empty) at ${s(t.restart)} s, paused (SIGSTOP) at ${s(t.pause)} s, resumed at ${s(t.resume)} s after load started. Every replica up and agreeing on the fleet again after the restart: ${convergenceText(outage.afterRestart)}; after SIGCONT: ${convergenceText(outage.afterResume)} (admin /metrics read every 100 ms; "settled": the agreement that held until the next step or the end of the run; chart \`shared-state-outage.svg\`).`,
  ];
}

function leastLoadTable(summaries: readonly LeastLoadSummary[]): string[] {
  if (summaries.every((s) => s.runs.length === 0)) return ['_Not run in this mode._'];
  const reference = (redis: boolean) => summaries.find((s) => s.config.replicas === 1 && s.config.redis === redis);
  return [
    '| configuration | Redis | waiting max ÷ mean | vs one router | TTFT p99 ms | vs one router | mean engine waiting | 429 (sum) | failed | fleet load age s | routers CPU (sum) |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...summaries.map((s) => {
      const ref = reference(s.config.redis);
      const vs = (pick: (x: LeastLoadSummary) => Spread) => (ref === undefined || ref === s ? '' : `${(relativeTo(pick(s).median, pick(ref).median) * 100).toFixed(0)}%`);
      const shed = s.runs.reduce((n, r) => n + r.measurement.run.shed, 0);
      const failed = s.runs.reduce((n, r) => n + r.measurement.run.failed, 0);
      const ages = s.runs.flatMap((r) => (r.fleetLoadAgeS === undefined ? [] : [r.fleetLoadAgeS]));
      return `| ${configLabel(s.config)} | ${s.runs[0] === undefined ? '-' : redisCell(s.runs[0])} | ${spreadText(s.imbalance, (n) => n.toFixed(2))} | ${vs((x) => x.imbalance)} | ${spreadText(s.ttftP99, ms)} | ${vs((x) => x.ttftP99)} | ${spreadText(s.meanWaiting, (n) => n.toFixed(2))} | ${shed} | ${failed} | ${ages.length === 0 ? '-' : fixed(spread(ages).median, 3)} | ${pct(spread(s.runs.map((r) => r.measurement.systemCpu)).median)} |`;
    }),
  ];
}

function quotaTable(quota: SharedStateRuns['quota']): string[] {
  if (quota.length === 0) return ['_Not run in this mode._'];
  const name = { shared: 'Redis', degraded: 'Redis down (degraded)', off: 'no Redis' } as const;
  return [
    '| mode | without a key → | with the key → | admitted req/s | 429 req/s | failed | replicas degraded | note |',
    '|---|---|---|---|---|---|---|---|',
    ...quota.map((q) => {
      const m = q.run?.measurement.run;
      const perS = (n: number | undefined) => (m === undefined || n === undefined ? '-' : ((n * 1000) / m.windowMs).toFixed(1));
      return `| ${name[q.mode]} | ${q.auth?.withoutKey ?? '-'} | ${q.auth?.withKey ?? '-'} | ${fixed(q.admittedPerS, 1)} | ${perS(m?.shed)} | ${m?.failed ?? '-'} | ${q.degradedReplicas ?? '-'} | ${q.error ?? (q.run === undefined ? '' : redisCell(q.run))} |`;
    }),
  ];
}

function costTable(calm: readonly CalmRun[]): string[] {
  const replicaCounts = [...new Set(calm.map((c) => c.run.replicas))];
  if (replicaCounts.length === 0) return ['_Not run in this mode._'];
  const rows = replicaCounts.flatMap((replicas) => {
    const off = calm.find((c) => c.run.replicas === replicas && !c.run.redis)?.run;
    const on = calm.find((c) => c.run.replicas === replicas && c.run.redis)?.run;
    if (off === undefined || on === undefined) return [];
    const e2e = (r: RunResult<unknown>) => r.measurement.e2e;
    const perRequest = (byCommand: Readonly<Record<string, number>>) =>
      Object.entries(byCommand)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([cmd, n]) => `${cmd} ${fixed(n / Math.max(1, on.requests))}`)
        .join(', ');
    return [
      `| ${replicas} | ${ms(e2e(off).p50)} / ${ms(e2e(off).p99)} | ${ms(e2e(on).p50)} / ${ms(e2e(on).p99)} | ${signedMs(e2e(on).p50 - e2e(off).p50)} / ${signedMs(e2e(on).p99 - e2e(off).p99)} | ${fixed(off.cpuMsPerRequest, 3)} | ${fixed(on.cpuMsPerRequest, 3)} | ${fixed(on.roundTripsPerRequest)} (${perRequest(on.roundTripsByCommand)}) | ${fixed(on.commandsPerRequest)} (${perRequest(on.commands?.byCommand ?? {})}) | ${redisCell(on)} |`,
    ];
  });
  return [
    '| replicas | latency p50 / p99 ms, no Redis | with Redis | added | router CPU ms per request, no Redis | with Redis | Redis round trips per request (by command) | commands Redis executed per request (script calls included) | Redis |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}

/** The report body (after the facts line). */
export function reportMarkdown(setup: Setup, runs: SharedStateRuns, barsMarkdown: string): string {
  const engines = ENGINES.map((e) => e.maxSeqs).join(', ');
  return [
    `Four engine simulators of unequal capacity (${engines} slots; ${ENGINES[0]?.ttftMs ?? 0} ms to first token, ${ENGINES[0]?.outputTokens ?? 0} tokens ${ENGINES[0]?.itlMs ?? 0} ms apart), measured capacity ${setup.capacityPerS.toFixed(0)} req/s; 50% = ${setup.calmPerS} req/s, 85% = ${setup.busyPerS} req/s, open loop, streaming chat. Router replicas (each engine's capacity configured in \`load.capacity\`, scrape every 250 ms, model probe retry 200 ms, defaults otherwise) behind nginx round-robin, one replica alone; with Redis: one local redis-server started by the run, emptied before each run. Conversations: ${USERS} (\`x-session-id\`); the engines' own records say which engines each reached (conversations with at least two requests count).`,
    '',
    barsMarkdown,
    '',
    `### Session stickiness at 50% load, a fifth engine (${LATE_ENGINE.maxSeqs} slots) joining halfway`,
    '',
    ...calmTable(runs.calm),
    '',
    '### Conversations at 85% load, three replicas',
    '',
    ...busyTable(runs.busy),
    ...outageText(runs.busy),
    '',
    '### Least-load at 85% load: three replicas against one router',
    '',
    'Keyless one-turn streams (the default profile ranks them by load: no session key, no history for its prefix walk to follow). Engine queues sampled every 100 ms; "waiting max ÷ mean" is the largest engine\'s time-averaged waiting queue over the mean of all four (1 = even; no queue anywhere counts as even). Median of interleaved rounds, [min–max]; "vs one router" compares medians with one router of the same Redis setting. On two cores the engines (simulated inside the benchmark process), the load generator, nginx and the routers share the CPU, so three replicas cost the engines some timing whatever they route: three replicas with Redis against three without isolates what the shared counts change.',
    '',
    ...leastLoadTable(runs.leastLoad),
    '',
    `### Quota: one key limited to ${QUOTA.limitPerS} req/s offering ${QUOTA.offeredPerS} req/s through three replicas`,
    '',
    ...quotaTable(runs.quota),
    '',
    '### What Redis costs at 50% load (the session runs above)',
    '',
    'Latency from the scheduled send; router CPU of all replicas over the run (background publishing included) ÷ requests they answered. Round trips: the commands the routers sent and got answered (their `switchyard_shared_state_command_duration_seconds` counts; a script call is one), ÷ the same requests; executed: `INFO` before and after the run, which also counts the calls a script makes inside Redis.',
    '',
    ...costTable(runs.calm),
    '',
    'Charts: `shared-state-quota.svg`, `shared-state-outage.svg`, `shared-state-least-load.svg`.',
  ].join('\n');
}

/** The charts: admitted requests per second of the quota runs, the fleet through the outage, least-load TTFT p99 per round. */
export function reportCharts(runs: SharedStateRuns): Chart[] {
  const charts: Chart[] = [];
  const quotaName = { shared: 'Redis', degraded: 'Redis down', off: 'no Redis' } as const;
  const quotaSeries = runs.quota.flatMap((q) => (q.run === undefined ? [] : [{ name: quotaName[q.mode], points: q.run.measurement.run.timeline.map((n, second) => [second, n] as const) }]));
  if (quotaSeries.length > 0) {
    charts.push({
      name: 'quota',
      svg: lineChart({
        title: `One key limited to ${QUOTA.limitPerS} req/s, offering ${QUOTA.offeredPerS}, three replicas: admitted per second`,
        xLabel: 'seconds since load started (warm-up included)',
        yLabel: 'admitted req/s',
        series: quotaSeries,
        thresholds: [
          { label: `${QUOTA.limitPerS + QUOTA.tolerancePerS}`, y: QUOTA.limitPerS + QUOTA.tolerancePerS },
          { label: `${QUOTA.limitPerS - QUOTA.tolerancePerS}`, y: QUOTA.limitPerS - QUOTA.tolerancePerS },
        ],
      }),
    });
  }
  const outage = runs.busy.find((b) => b.kind === 'outage')?.run;
  if (outage?.during !== undefined) {
    const samples = outage.during.samples;
    charts.push({
      name: 'outage',
      svg: lineChart({
        title: 'Redis killed, restarted, paused and resumed under 85% load: replicas with shared state up',
        xLabel: 'seconds since load started',
        yLabel: 'replicas',
        series: [
          { name: 'replicas up', points: samples.map((s) => [s.atMs / 1000, s.up] as const) },
          { name: 'min fleet seen', dashed: true, points: samples.map((s) => [s.atMs / 1000, s.minFleet] as const) },
          { name: 'ok req/s ÷ 100', dashed: true, points: outage.measurement.run.timeline.map((n, second) => [second, n / 100] as const) },
        ],
      }),
    });
  }
  const withRounds = runs.leastLoad.filter((s) => s.runs.length > 0);
  if (withRounds.length > 0) {
    charts.push({
      name: 'least-load',
      svg: lineChart({
        title: 'Least-load at 85%: TTFT p99 per round',
        xLabel: 'round',
        yLabel: 'TTFT p99 ms',
        series: withRounds.map((s) => ({ name: configLabel(s.config), dashed: s.config.replicas === 1, points: s.runs.map((r, i) => [i + 1, r.measurement.ttft.p99] as const) })),
      }),
    });
  }
  return charts;
}

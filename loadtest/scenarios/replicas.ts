/**
 * `npm run bench -- replicas`: several router processes behind one spreader
 * (nginx round-robin, standing in for a Kubernetes Service), over the same
 * engines, at the same offered load, for 1, 2 and 3 replicas. What must hold
 * without any shared state: no failed requests, and replicas agreeing on
 * which engine each conversation goes to (rendezvous hashing over the same
 * endpoint set), so scaling the router out does not scatter KV caches. The
 * engines' queues are sampled to show what each replica's private in-flight
 * view costs; shared state through Redis is the later step this run will
 * measure against.
 *
 *   npm run bench -- replicas [--quick | --smoke]
 */
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { startNginx } from './baselines/nginx.ts';
import { lineChart } from '../report/svg-chart.ts';
import { closeSimulatedFleet, fleetCapacityPerS, measureServiceMs, startSimulatedFleet, type EngineSpec } from './fleet.ts';
import { measure, type Measurement } from './measure.ts';
import { Bars, factsLine, ms, pct, runFacts, runIfMain, scenarioOptions, withoutHistograms, writeResults } from './results.ts';
import { startRouterSystem, stopAll, type System } from './systems.ts';

const MODEL = 'replica-model';
const FLEET: readonly EngineSpec[] = Array.from({ length: 4 }, (_, i) => ({ name: `E${i + 1}`, maxSeqs: 8, ttftMs: 30, itlMs: 5, outputTokens: 32 }));
const USERS = 400;
/**
 * Half of capacity: busy, but below where the session policy's bounded-load
 * rule starts moving conversations off a full engine (routing-quality shows
 * that trade-off), so what is measured is whether replicas agree.
 */
const LOAD = 0.5;
const REQUEST: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: 0, headers: {}, users: USERS, checkIds: true };

const PLANS = {
  full: { replicas: [1, 2, 3], warmupMs: 3000, durationMs: 20_000 },
  quick: { replicas: [1, 2, 3], warmupMs: 2000, durationMs: 8000 },
  smoke: { replicas: [1, 2], warmupMs: 500, durationMs: 2000 },
} as const;

interface ReplicaRun {
  readonly replicas: number;
  readonly measurement: Measurement;
  /** Conversations whose every request reached one engine, over conversations seen. */
  readonly stickiness: number;
  readonly conversations: number;
  readonly maxEngineWaiting: number[];
  readonly meanEngineRunning: number[];
}

/** Entry point; returns the exit code. */
export async function replicas(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'replicas');
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const engines = await startSimulatedFleet(MODEL, FLEET);
  try {
    const capacity = fleetCapacityPerS(FLEET, await measureServiceMs(engines, MODEL));
    const rate = Math.round(capacity * LOAD);
    const runs: ReplicaRun[] = [];
    for (const count of plan.replicas) {
      for (const engine of engines) engine.sessions.clear();
      const routers: System[] = [];
      let spreader: Awaited<ReturnType<typeof startNginx>> | undefined;
      try {
        for (let i = 0; i < count; i++) routers.push(await startRouterSystem(engines.map((e) => e.url), { name: `switchyard-${i + 1}`, args: ['--scrape-interval-ms', '250'] }));
        spreader = await startNginx({ upstreams: routers.map((r) => r.url) });
        const front: System = { name: `${count} × switchyard`, url: spreader.url, description: `nginx round-robin over ${count} router processes`, pids: () => routers.flatMap((r) => r.pids()), stop: async () => {} };
        const samples: { waiting: number[]; running: number[] }[] = [];
        const sampler = setInterval(() => samples.push({ waiting: engines.map((e) => e.scheduler.waiting), running: engines.map((e) => e.scheduler.running) }), 100);
        const spec: Omit<LoadSpec, 'target'> = { request: REQUEST, mode: { kind: 'open', ratePerS: rate, maxConnections: 1000 }, warmupMs: plan.warmupMs, durationMs: plan.durationMs, idPrefix: `r${count}`, seed: 7 };
        let measurement: Measurement;
        try {
          measurement = await measure(front, spec, { processes: options.generators || 1, quiet: options.quiet }, `${rate} req/s`);
        } finally {
          clearInterval(sampler);
        }
        const enginesPerKey = new Map<string, number>();
        for (const engine of engines) for (const key of engine.sessions.keys()) enginesPerKey.set(key, (enginesPerKey.get(key) ?? 0) + 1);
        const single = [...enginesPerKey.values()].filter((n) => n === 1).length;
        runs.push({
          replicas: count,
          measurement,
          stickiness: enginesPerKey.size === 0 ? Number.NaN : single / enginesPerKey.size,
          conversations: enginesPerKey.size,
          maxEngineWaiting: engines.map((_, i) => Math.max(0, ...samples.map((s) => s.waiting[i] as number))),
          meanEngineRunning: engines.map((_, i) => samples.reduce((sum, s) => sum + (s.running[i] as number), 0) / Math.max(1, samples.length)),
        });
      } finally {
        await spreader?.stop();
        await stopAll(routers);
      }
    }

    const bars = new Bars();
    const failed = runs.reduce((n, r) => n + r.measurement.run.failed, 0);
    bars.check('correctness', 'no failed requests with any number of replicas', failed === 0, `${failed} failed`);
    const single = runs.find((r) => r.replicas === 1);
    for (const run of runs.filter((r) => r.replicas > 1)) {
      bars.check('performance', `${run.replicas} replicas keep conversations together as well as one does (within 5 points)`, single !== undefined && run.stickiness >= single.stickiness - 0.05, `${pct(run.stickiness)} vs ${pct(single?.stickiness ?? Number.NaN)} of conversations on one engine`);
    }

    const facts = runFacts(`npm run bench -- replicas ${argv.join(' ')}`.trim());
    const markdown = [
      factsLine(facts),
      '',
      `4 engine simulators (8 slots, 30 ms to first token, 32 tokens 5 ms apart), fleet capacity ${capacity.toFixed(0)} req/s; offered ${rate} req/s (${pct(LOAD)}) streaming chat, open loop, every request one of ${USERS} conversations (\`x-session-id\`). Router processes (scrape every 250 ms, defaults otherwise) behind nginx round-robin, no shared state.`,
      '',
      bars.markdown(options),
      '',
      '| replicas | ok | shed | failed | TTFT p50 ms | TTFT p99 ms | latency p99 ms | conversations on one engine | max engine waiting | mean engine running | routers CPU (sum) |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...runs.map((r) => {
        const m = r.measurement;
        return `| ${r.replicas} | ${m.run.ok} | ${m.run.shed} | ${m.run.failed} | ${ms(m.ttft.p50)} | ${ms(m.ttft.p99)} | ${ms(m.e2e.p99)} | ${pct(r.stickiness)} of ${r.conversations} | ${r.maxEngineWaiting.join('/')} | ${r.meanEngineRunning.map((n) => n.toFixed(1)).join('/')} | ${pct(m.systemCpu)} |`;
      }),
      '',
      'Chart: `replicas-ttft.svg`.',
    ].join('\n');
    const chart = lineChart({
      title: 'Router replicas behind one spreader: time to first token',
      xLabel: 'router replicas',
      yLabel: 'TTFT ms',
      series: [
        { name: 'p99', points: runs.map((r) => [r.replicas, r.measurement.ttft.p99] as const) },
        { name: 'p50', dashed: true, points: runs.map((r) => [r.replicas, r.measurement.ttft.p50] as const) },
      ],
    });
    writeResults(options, 'replicas', facts, { plan, capacity, rate, bars: bars.list, runs: runs.map((r) => ({ ...r, measurement: withoutHistograms(r.measurement) })) }, markdown, [{ name: 'ttft', svg: chart }]);
    return bars.pass(options) ? 0 : 1;
  } finally {
    await closeSimulatedFleet(engines);
  }
}

runIfMain(import.meta.url, replicas);

/**
 * `npm run bench -- large-prompts`: 200 KB prompts (long RAG contexts, pasted
 * documents) at rising concurrency. The router reads each body to find the
 * model and session key before it forwards, so this is where that costs:
 * time to first token through each proxy against the engine directly, in
 * the same run, proxies pinned to core 0 as in proxy-overhead.
 *
 *   npm run bench -- large-prompts [--quick | --smoke] [--peer off] [--cpu-prof DIR] [--before DIR]
 *
 * The bare `node:http` + undici forwarder, which reads each body into memory
 * before it forwards as the router must, runs beside them: what switchyard
 * spends per body above it is its own. `--cpu-prof DIR` writes the CPU
 * profiles of the router and the bare forwarder there when they stop.
 * `--before DIR` runs another checkout of switchyard (a worktree of an
 * earlier commit, `npm ci` done there) beside them, for a before/after in
 * one run.
 */
import { canPin } from '../../tests/kit/processes.ts';
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { lineChart } from '../report/svg-chart.ts';
import { measure, type Measurement } from './measure.ts';
import { Bars, factsLine, medianOf, ms, pct, ratio, runFacts, runIfMain, scenarioOptions, signedMs, withoutHistograms, writeResults } from './results.ts';
import { BARE_FORWARDER_NAME, cpuProfileArgs, routerCheckout, startBareForwarder, startComparedSystems, startEngineProcesses, stopAll, type System } from './systems.ts';

const MODEL = 'long-context';
const PROMPT_BYTES = 200 * 1024;
const REQUEST: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: PROMPT_BYTES, headers: { 'x-sim-ttft-ms': '20', 'x-sim-itl-ms': '2', 'x-sim-output-tokens': '8' }, users: 0, checkIds: true };

const PLANS = {
  full: { concurrencies: [1, 4, 16, 64], rounds: 5, warmupMs: 500, durationMs: 3000 },
  quick: { concurrencies: [1, 16, 64], rounds: 3, warmupMs: 500, durationMs: 2000 },
  smoke: { concurrencies: [4], rounds: 1, warmupMs: 200, durationMs: 800 },
} as const;


const spread = (s: { min: number; max: number }) => `${ms(s.min)}-${ms(s.max)}`;

/** Entry point; returns the exit code. */
export async function largePrompts(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'large-prompts');
  const profileArgs = cpuProfileArgs(options.extra['cpu-prof']);
  const before = routerCheckout(options.extra['before']);
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const pinned = canPin();
  const generators = { processes: options.generators || 1, quiet: options.quiet, ...(pinned ? { core: 1 } : {}) };
  const engines = await startEngineProcesses(1, MODEL, ['--max-seqs', '1000'], pinned ? 1 : undefined);
  let systems: System[] = [];
  try {
    systems = await startComparedSystems(engines, MODEL, { ...(pinned ? { core: 0 } : {}), peer: options.extra['peer'] !== 'off', routerNodeArgs: profileArgs, before });
    // The floor a Node proxy that must read the body before it forwards shows: what switchyard spends above it is its own.
    systems.push(await startBareForwarder(engines.urls[0] as string, pinned ? 0 : undefined, profileArgs));
    // Rounds interleave the systems (and the concurrencies) so drift on the shared machine hits them alike.
    const runs: (Measurement & { round: number })[] = [];
    for (let round = 0; round < plan.rounds; round++) {
      for (const concurrency of plan.concurrencies) {
        for (const system of systems) {
          const spec: Omit<LoadSpec, 'target'> = { request: REQUEST, mode: { kind: 'closed', concurrency }, warmupMs: plan.warmupMs, durationMs: plan.durationMs, idPrefix: `${system.name}-c${concurrency}-r${round}`, seed: concurrency + 100 * round };
          runs.push({ ...(await measure(system, spec, generators, `concurrency ${concurrency}`)), round });
        }
      }
    }
    const of = (name: string, concurrency: number) => runs.filter((m) => m.system === name && m.label === `concurrency ${concurrency}`);
    // CPU microseconds the proxy spent per request: what a large body costs it, whoever limits the rate.
    const cpuUs = (m: Measurement) => (m.rps > 0 ? (m.systemCpu * 1e6) / m.rps : Number.NaN);
    const figures = (name: string, concurrency: number) => {
      const these = of(name, concurrency);
      return { p50: medianOf(these.map((m) => m.ttft.p50)), p99: medianOf(these.map((m) => m.ttft.p99)), e2eP50: medianOf(these.map((m) => m.e2e.p50)), cpuUs: medianOf(these.map(cpuUs)), rps: medianOf(these.map((m) => m.rps)) };
    };

    const bars = new Bars();
    const failed = runs.reduce((n, m) => n + m.run.failed, 0);
    bars.check('correctness', 'every response valid', failed === 0, `${failed} failed of ${runs.reduce((n, m) => n + m.run.measured, 0)}`);
    for (const concurrency of plan.concurrencies) {
      if (of('switchyard', concurrency).length === 0 || of('nginx', concurrency).length === 0) continue;
      const router = figures('switchyard', concurrency).p50;
      const nginx = figures('nginx', concurrency).p50;
      const beforeRatio = before === undefined ? '' : `; ${before.name} ${ratio(figures(before.name, concurrency).p50.median / nginx.median)}`;
      bars.check('performance', `TTFT p50 at concurrency ${concurrency} ≤ 1.2× nginx's${plan.rounds > 1 ? ` (median of ${plan.rounds} rounds)` : ''}`, router.median <= 1.2 * nginx.median, `${ms(router.median)} vs ${ms(nginx.median)} ms = ${ratio(router.median / nginx.median)} (rounds ${spread(router)} vs ${spread(nginx)}${beforeRatio})`);
    }

    const facts = runFacts(`npm run bench -- large-prompts ${argv.join(' ')}`.trim());
    const rows = plan.concurrencies.flatMap((concurrency) =>
      systems.map((system) => {
        const f = figures(system.name, concurrency);
        const floor = figures('direct', concurrency);
        const added = system.name === 'direct' ? '' : `${signedMs(f.p50.median - floor.p50.median)} / ${signedMs(f.p99.median - floor.p99.median)}`;
        const these = of(system.name, concurrency);
        const last = these.at(-1);
        const cpu = system.name === 'direct' ? '-' : `${f.cpuUs.median.toFixed(0)} (${f.cpuUs.min.toFixed(0)}-${f.cpuUs.max.toFixed(0)})`;
        const overBare = system.name === 'direct' ? '-' : ratio(f.cpuUs.median / figures(BARE_FORWARDER_NAME, concurrency).cpuUs.median);
        const queued = these.map((m) => m.routerQueued);
        const stolen = these.flatMap((m) => (m.steal === undefined ? [] : [m.steal]));
        const steal = stolen.length === 0 ? undefined : medianOf(stolen);
        const stealCell = steal === undefined ? '-' : `${pct(steal.median)} (${pct(steal.min)}-${pct(steal.max)})`;
        const queuedCell = queued.every((n) => n === undefined) ? '-' : queued.map((n) => n ?? '?').join(', ');
        return `| ${system.name} | concurrency ${concurrency} | ${f.rps.median.toFixed(0)} | ${((f.rps.median * PROMPT_BYTES) / 2 ** 20).toFixed(0)} | ${ms(f.p50.median)} (${spread(f.p50)}) | ${ms(f.p99.median)} (${spread(f.p99)}) | ${added} | ${ms(f.e2eP50.median)} (${spread(f.e2eP50)}) | ${cpu} | ${overBare} | ${stealCell} | ${queuedCell} | ${last?.run.generatorBottleneck ?? 'kept up'} |`;
      }),
    );
    const markdown = [
      factsLine(facts),
      '',
      `Streaming chat with a ${PROMPT_BYTES / 1024} KB prompt; engine: 20 ms to the first event, 8 tokens 2 ms apart. Closed loop per concurrency, ${plan.rounds} interleaved round${plan.rounds === 1 ? '' : 's'}: each figure is the median of the rounds, their range in brackets. Systems: ${systems.map((s) => `${s.name} (${s.description})`).join('; ')}.${pinned ? ' Proxies pinned to core 0 (every thread of the process: taskset), engine and load generator on core 1.' : ''} CPU is the proxy's user + system time from /proc per request served. The whole response p50 sits beside TTFT because, where the engine's and load generator's core is saturated, how a request's time splits before and after its first token follows that core's scheduling as much as the proxy.`,
      '',
      bars.markdown(options),
      '',
      '| system | load | req/s | prompt MiB/s | TTFT p50 ms | TTFT p99 ms | added TTFT p50 / p99 ms vs direct | whole response p50 ms | proxy CPU µs per request | CPU ÷ the bare forwarder | CPU steal (machine) | queued in the router (each round) | load generator (last round) |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      'Chart: `large-prompts-ttft.svg`.',
    ].join('\n');
    const chart = lineChart({
      title: `Time to first token, ${PROMPT_BYTES / 1024} KB prompts`,
      xLabel: 'concurrent clients',
      yLabel: 'TTFT ms',
      logY: true,
      series: systems.flatMap((s) => [
        { name: `${s.name} p99`, points: plan.concurrencies.map((c) => [c, figures(s.name, c).p99.median] as const) },
        { name: `${s.name} p50`, dashed: true, points: plan.concurrencies.map((c) => [c, figures(s.name, c).p50.median] as const) },
      ]),
    });
    writeResults(options, 'large-prompts', facts, { plan, promptBytes: PROMPT_BYTES, bars: bars.list, runs: runs.map(withoutHistograms) }, markdown, [{ name: 'ttft', svg: chart }]);
    return bars.pass(options) ? 0 : 1;
  } finally {
    await stopAll(systems);
    await engines.stop();
  }
}

runIfMain(import.meta.url, largePrompts);

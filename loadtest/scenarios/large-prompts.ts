/**
 * `switchyard bench large-prompts`: 200 KB prompts (long RAG contexts, pasted
 * documents) at rising concurrency. The router reads each body to find the
 * model and session key before it forwards, so this is where that costs:
 * time to first token through each proxy against the engine directly, in
 * the same run, proxies pinned to core 0 as in proxy-overhead.
 *
 *   npm run bench -- large-prompts [--quick | --smoke] [--peer off]
 */
import { canPin } from '../bench/processes.ts';
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { lineChart } from '../report/svg-chart.ts';
import { measure, type Measurement } from './measure.ts';
import { Bars, factsLine, ms, pct, runFacts, runIfMain, scenarioOptions, signedMs, withoutHistograms, writeResults } from './results.ts';
import { startComparedSystems, startEngines, stopAll, type System } from './systems.ts';

const MODEL = 'long-context';
const PROMPT_BYTES = 200 * 1024;
const REQUEST: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: PROMPT_BYTES, headers: { 'x-sim-ttft-ms': '20', 'x-sim-itl-ms': '2', 'x-sim-output-tokens': '8' }, users: 0, checkIds: true };

const PLANS = {
  full: { concurrencies: [1, 4, 16, 64], warmupMs: 1000, durationMs: 6000 },
  quick: { concurrencies: [1, 16, 64], warmupMs: 1000, durationMs: 3000 },
  smoke: { concurrencies: [4], warmupMs: 200, durationMs: 800 },
} as const;

/** Entry point; returns the exit code. */
export async function largePrompts(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, ['peer']);
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const pinned = canPin();
  const generators = { processes: options.generators || 1, quiet: options.quiet, ...(pinned ? { core: 1 } : {}) };
  const engines = await startEngines(1, MODEL, ['--max-seqs', '1000'], pinned ? 1 : undefined);
  let systems: System[] = [];
  try {
    systems = await startComparedSystems(engines, MODEL, { ...(pinned ? { core: 0 } : {}), peer: options.extra['peer'] !== 'off' });
    const runs: Measurement[] = [];
    for (const concurrency of plan.concurrencies) {
      for (const system of systems) {
        const spec: Omit<LoadSpec, 'target'> = { request: REQUEST, mode: { kind: 'closed', concurrency }, warmupMs: plan.warmupMs, durationMs: plan.durationMs, idPrefix: `${system.name}-c${concurrency}`, seed: concurrency };
        runs.push(await measure(system, spec, generators, `concurrency ${concurrency}`));
      }
    }
    const at = (name: string, concurrency: number) => runs.find((m) => m.system === name && m.label === `concurrency ${concurrency}`);

    const bars = new Bars();
    const failed = runs.reduce((n, m) => n + m.run.failed, 0);
    bars.check('correctness', 'every response valid', failed === 0, `${failed} failed of ${runs.reduce((n, m) => n + m.run.measured, 0)}`);
    for (const concurrency of plan.concurrencies) {
      const router = at('switchyard', concurrency);
      const nginx = at('nginx', concurrency);
      if (router === undefined || nginx === undefined) continue;
      bars.check('performance', `TTFT p50 at concurrency ${concurrency} ≤ 1.2× nginx's`, router.ttft.p50 <= 1.2 * nginx.ttft.p50, `${ms(router.ttft.p50)} vs ${ms(nginx.ttft.p50)} ms`);
    }

    const facts = runFacts(`npm run bench -- large-prompts ${argv.join(' ')}`.trim());
    const rows = runs.map((m) => {
      const floor = at('direct', Number(m.label.split(' ')[1]));
      const added = floor === undefined || m.system === 'direct' ? '' : `${signedMs(m.ttft.p50 - floor.ttft.p50)} / ${signedMs(m.ttft.p99 - floor.ttft.p99)}`;
      return `| ${m.system} | ${m.label} | ${m.run.ok} | ${m.run.failed} | ${m.rps.toFixed(0)} | ${((m.rps * PROMPT_BYTES) / 2 ** 20).toFixed(0)} | ${ms(m.ttft.p50)} | ${ms(m.ttft.p99)} | ${added} | ${pct(m.systemCpu)} | ${m.run.generatorBottleneck ?? 'kept up'} |`;
    });
    const markdown = [
      factsLine(facts),
      '',
      `Streaming chat with a ${PROMPT_BYTES / 1024} KB prompt; engine: 20 ms to the first event, 8 tokens 2 ms apart. Closed loop per concurrency. Systems: ${systems.map((s) => `${s.name} (${s.description})`).join('; ')}.${pinned ? ' Proxies pinned to core 0; engine and load generator on core 1.' : ''}`,
      '',
      bars.markdown(options.smoke),
      '',
      '| system | load | ok | failed | req/s | prompt MiB/s | TTFT p50 ms | TTFT p99 ms | added TTFT p50 / p99 ms vs direct | system CPU | load generator |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
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
        { name: `${s.name} p99`, points: runs.filter((m) => m.system === s.name).map((m) => [Number(m.label.split(' ')[1]), m.ttft.p99] as const) },
        { name: `${s.name} p50`, dashed: true, points: runs.filter((m) => m.system === s.name).map((m) => [Number(m.label.split(' ')[1]), m.ttft.p50] as const) },
      ]),
    });
    writeResults(options.out, 'large-prompts', facts, { plan, promptBytes: PROMPT_BYTES, bars: bars.list, runs: runs.map(withoutHistograms) }, markdown, [{ name: 'ttft', svg: chart }]);
    return bars.pass(options.smoke) ? 0 : 1;
  } finally {
    await stopAll(systems);
    await engines.stop();
  }
}

runIfMain(import.meta.url, largePrompts);

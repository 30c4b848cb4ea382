/**
 * `npm run bench -- proxy-overhead`: what the router costs on the request
 * path, against the engine directly and against nginx over the same engine,
 * in the same run, with the router and nginx each pinned to core 0 (engine
 * and load generators share core 1).
 *
 * 1. Throughput vs concurrency: closed loop, small non-streamed chat.
 * 2. Latency vs offered load: open loop at fractions of the router's maximum.
 * 3. Streaming: 1,000 streams arriving over 2 s; time to first token.
 * 4. The tail at half load (the "added p99 ≤ 2 ms" bar): open loop at 50% of
 *    the router's maximum from part 1, in interleaved rounds, with every
 *    system started again over the static engine (nginx answering at once)
 *    instead of the simulator, so the shared core is not the tail
 *    (loadtest/scenarios/baselines/static-engine.ts says why). The bare `node:http` +
 *    undici forwarder runs beside them: a long run it shows too is Node's
 *    or the machine's, not the router's own.
 *
 *   npm run bench -- proxy-overhead [--quick | --smoke] [--generators N] [--peer off] [--cpu-prof DIR] [--before DIR]
 *
 * `--before DIR` runs another checkout of switchyard (a worktree of an
 * earlier commit, `npm ci` done there) beside this one in every part, so a
 * before/after comparison shares the run.
 *
 * `--cpu-prof DIR` writes the router's CPU profiles there, one per router process (parts 1-3, part 4), when it stops (open them in Chrome
 * DevTools or speedscope for a flame graph; `node loadtest/report/profile-summary.ts FILE`
 * prints where the time went).
 */
import { canPin } from '../../tests/kit/processes.ts';
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { lineChart } from '../report/svg-chart.ts';
import { measure, type Measurement } from './measure.ts';
import { Bars, factsLine, ms, pct, ratio, runFacts, runIfMain, scenarioOptions, signedMs, withoutHistograms, writeResults } from './results.ts';
import { BARE_FORWARDER_NAME, cpuProfileArgs, startBareForwarder, routerCheckout, startComparedSystems, startEngineProcesses, startStaticEngines, stopAll, type Engines, type System } from './systems.ts';

const MODEL = 'bench';
const SMALL: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: false, tools: false, promptBytes: 0, headers: { 'x-sim-ttft-ms': '0', 'x-sim-itl-ms': '0', 'x-sim-output-tokens': '16' }, users: 0, checkIds: true };
/** Streams long enough (≈ 3 s) that all of them are open at once while they arrive over 2 s. */
const LONG_STREAM: RequestTemplate = { ...SMALL, stream: true, headers: { 'x-sim-ttft-ms': '5', 'x-sim-itl-ms': '50', 'x-sim-output-tokens': '60' } };

interface Plan {
  readonly concurrencies: number[];
  readonly loadFractions: number[];
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly streams: number;
  readonly streamArrivalMs: number;
  readonly streamRounds: number;
  /** Open-loop runs at 50% of the router's max per system over the static engine; the p99 bar takes their median. */
  readonly halfLoadRounds: number;
  /**
   * Closed-loop traffic each system gets before anything is measured, so JIT
   * and heap sizing are done, and a cold router's safe start has grown to
   * the load: it grows once a scrape (every second), and after 3 s it still
   * held the engine at 13 requests, queueing the open-loop bursts that
   * followed (2,489 requests waited 23 ms on average in the first 50% run).
   */
  readonly primeMs: number;
}

const PLANS: Record<'full' | 'quick' | 'smoke', Plan> = {
  full: { concurrencies: [1, 8, 32, 128], loadFractions: [0.1, 0.3, 0.5, 0.7, 0.9], warmupMs: 2000, durationMs: 8000, streams: 1000, streamArrivalMs: 2000, streamRounds: 5, halfLoadRounds: 5, primeMs: 12_000 },
  quick: { concurrencies: [8, 32, 128], loadFractions: [0.25, 0.5, 0.75], warmupMs: 1000, durationMs: 4000, streams: 1000, streamArrivalMs: 2000, streamRounds: 1, halfLoadRounds: 3, primeMs: 12_000 },
  smoke: { concurrencies: [32], loadFractions: [0.5], warmupMs: 300, durationMs: 1200, streams: 200, streamArrivalMs: 1000, streamRounds: 1, halfLoadRounds: 1, primeMs: 500 },
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Entry point; returns the exit code. */
export async function proxyOverhead(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'proxy-overhead');
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const pinned = canPin();
  const systemCore = pinned ? 0 : undefined;
  const clientCore = pinned ? 1 : undefined;
  const generators = { processes: options.generators || 1, quiet: options.quiet, ...(clientCore === undefined ? {} : { core: clientCore }) };

  // A smoke run checks switchyard's correctness; the peer router would add only time.
  const compared = { ...(systemCore === undefined ? {} : { core: systemCore }), peer: options.extra['peer'] !== 'off' && !options.smoke, routerNodeArgs: cpuProfileArgs(options.extra['cpu-prof']), before: routerCheckout(options.extra['before']) };
  const prime = async (over: readonly System[]) => {
    for (const system of over) {
      await measure(system, { request: SMALL, mode: { kind: 'closed', concurrency: 32 }, warmupMs: 0, durationMs: plan.primeMs, idPrefix: `${system.name}-prime`, seed: 0 }, generators, 'priming (not reported)');
    }
  };
  let engines: Engines | undefined = await startEngineProcesses(1, MODEL, ['--max-seqs', '100000'], clientCore);
  let systems: System[] = [];
  try {
    systems = await startComparedSystems(engines, MODEL, compared);
    // Parts 1-3 are reported under these systems; part 4 starts its own.
    const measured = systems.map(({ name, description }) => ({ name, description }));
    await prime(systems);
    const base = { warmupMs: plan.warmupMs, durationMs: plan.durationMs, seed: 1 } as const;

    // 1. Throughput vs concurrency.
    const closed: Measurement[] = [];
    for (const concurrency of plan.concurrencies) {
      for (const system of systems) {
        const spec: Omit<LoadSpec, 'target'> = { ...base, request: SMALL, mode: { kind: 'closed', concurrency }, idPrefix: `${system.name}-c${concurrency}` };
        closed.push(await measure(system, spec, generators, `concurrency ${concurrency}`));
      }
    }
    const maxRps = (name: string) => Math.max(...closed.filter((m) => m.system === name).map((m) => m.rps));
    const routerMax = maxRps('switchyard');

    // 2. Latency vs offered load, as fractions of the router's maximum.
    const open: (Measurement & { offered: number; fraction: number })[] = [];
    for (const fraction of plan.loadFractions) {
      const offered = Math.max(1, Math.round(routerMax * fraction));
      for (const system of systems) {
        const spec: Omit<LoadSpec, 'target'> = { ...base, request: SMALL, mode: { kind: 'open', ratePerS: offered, maxConnections: 512 }, idPrefix: `${system.name}-o${offered}` };
        open.push({ ...(await measure(system, spec, generators, `${offered} req/s (${pct(fraction)} of router max)`)), offered, fraction });
      }
    }

    // 3. Streams arriving together; rounds interleave the systems so drift hits them alike.
    const streams: Measurement[] = [];
    for (let round = 0; round < plan.streamRounds; round++) {
      for (const system of systems) {
        const spec: Omit<LoadSpec, 'target'> = {
          request: LONG_STREAM,
          mode: { kind: 'open', ratePerS: (plan.streams * 1000) / plan.streamArrivalMs, maxConnections: plan.streams },
          warmupMs: 0,
          requests: plan.streams,
          idPrefix: `${system.name}-s${round}`,
          seed: 10 + round,
        };
        streams.push(await measure(system, spec, generators, `${plan.streams} streams over ${plan.streamArrivalMs / 1000} s, round ${round + 1}`));
      }
    }

    // 4. The tail at half load, every system started again over the static engine.
    await stopAll(systems);
    systems = [];
    await engines.stop();
    engines = undefined; // stopped: if the static engine does not start, `finally` has nothing left to stop
    engines = await startStaticEngines(MODEL, clientCore);
    systems = await startComparedSystems(engines, MODEL, compared);
    // The floor a Node proxy shows on this machine at this rate: a long run it shares is not the router's own.
    systems.push(await startBareForwarder(engines.urls[0] as string, systemCore));
    const halfSystems = systems.map(({ name, description }) => ({ name, description }));
    await prime(systems);
    const halfRate = Math.max(1, Math.round(routerMax / 2));
    const half: Measurement[] = [];
    for (let round = 0; round < plan.halfLoadRounds; round++) {
      for (const system of systems) {
        const spec: Omit<LoadSpec, 'target'> = { ...base, request: SMALL, mode: { kind: 'open', ratePerS: halfRate, maxConnections: 512 }, idPrefix: `${system.name}-h${round}` };
        half.push(await measure(system, spec, generators, `${halfRate} req/s over the static engine, round ${round + 1}`));
      }
    }

    // Bars.
    const bars = new Bars();
    const all = [...closed, ...open, ...streams, ...half];
    const failed = all.reduce((n, m) => n + m.run.failed, 0);
    bars.check('correctness', 'every response valid (status, JSON, SSE framing, [DONE], ids)', failed === 0, `${failed} failed of ${all.reduce((n, m) => n + m.run.measured, 0)}`);
    const nginxMax = maxRps('nginx');
    // When the client side limits a run, CPU per request still tells what each proxy would serve with its core to itself.
    const cpuPerRequestUs = (m: Measurement) => (m.rps > 0 ? (m.systemCpu * 1e6) / m.rps : Number.NaN);
    const projectedMax = (name: string) => Math.max(...closed.filter((m) => m.system === name).map((m) => 1e6 / cpuPerRequestUs(m)));
    const nginxBest = closed.filter((m) => m.system === 'nginx').reduce((a, b) => (b.rps > a.rps ? b : a));
    const nginxCaveat =
      nginxBest.systemCpu < 0.85
        ? `; nginx used ${pct(nginxBest.systemCpu)} of its core at its best, so the client side limited it; by CPU per request at 100% of one core: switchyard ${projectedMax('switchyard').toFixed(0)} vs nginx ${projectedMax('nginx').toFixed(0)} req/s = ${ratio(projectedMax('switchyard') / projectedMax('nginx'))}`
        : '';
    const projectedRatio = nginxBest.systemCpu < 0.85 ? projectedMax('switchyard') / projectedMax('nginx') : routerMax / nginxMax;
    bars.check(
      'performance',
      'non-streaming req/s ≥ 0.45× nginx (both pinned to one core; projected from CPU per request when the client side is the limit)',
      nginxMax > 0 && projectedRatio >= 0.45,
      `measured ${routerMax.toFixed(0)} vs ${nginxMax.toFixed(0)} req/s = ${ratio(routerMax / nginxMax)}${nginxCaveat}`,
    );
    const halfP99 = (name: string) => half.filter((m) => m.system === name && m.run.ok > 0).map((m) => m.e2e.p99);
    const [routerP99s, directP99s, bareP99s] = [halfP99('switchyard'), halfP99('direct'), halfP99(BARE_FORWARDER_NAME)];
    const beforeP99s = compared.before === undefined ? [] : halfP99(compared.before.name);
    // What the machine did beside the system during those runs: a full client core or a retransmission is a tail no proxy caused.
    const halfFacts = (name: string) => {
      const runs = half.filter((m) => m.system === name);
      const busy = runs.map((m) => m.clientCoreBusy).filter((b): b is number => b !== undefined);
      const queued = runs.reduce((n, m) => n + (m.routerQueued ?? 0), 0);
      const collections = runs.flatMap((m) => m.routerScavenges ?? []);
      const count = collections.reduce((n, g) => n + g.count, 0);
      const pause = count === 0 ? '' : `, router scavenges ${(collections.reduce((t, g) => t + g.count * g.meanMs, 0) / count).toFixed(1)} ms mean`;
      const steal = runs.map((m) => m.steal).filter((s): s is number => s !== undefined);
      const stolen = steal.length === 0 ? '' : `, CPU steal ${pct(median(steal))} median (${pct(Math.min(...steal))}-${pct(Math.max(...steal))})`;
      return `${busy.length === 0 ? '-' : pct(median(busy))} median, ${runs.reduce((n, m) => n + (m.tcpRetransmits ?? 0), 0)} TCP retransmits${stolen}${queued > 0 ? `, ${queued} queued in the router` : ''}${pause}`;
    };
    if (routerP99s.length > 0 && directP99s.length > 0) {
      const added = median(routerP99s) - median(directP99s);
      const spread = (values: number[]) => `${ms(Math.min(...values))}-${ms(Math.max(...values))}`;
      bars.check(
        'performance',
        `added p99 ≤ 2 ms over direct at 50% of the router's max (${halfRate} req/s, half its max over the simulator; open loop, over the static engine${routerP99s.length > 1 ? `, median of ${routerP99s.length} runs` : ''})`,
        added <= 2,
        `${ms(median(routerP99s))} vs ${ms(median(directP99s))} ms: ${signedMs(added)} ms (runs: router ${spread(routerP99s)}, direct ${spread(directP99s)} ms${bareP99s.length === 0 ? '' : `; the bare node:http + undici forwarder ${ms(median(bareP99s))} ms, runs ${spread(bareP99s)}`}${beforeP99s.length === 0 ? '' : `; ${compared.before?.name ?? ''} ${ms(median(beforeP99s))} ms, runs ${spread(beforeP99s)}`}; client core busy ${halfFacts('switchyard')} vs ${halfFacts('direct')})`,
      );
    }
    const ttft = (name: string, q: 'p50' | 'p99') => median(streams.filter((m) => m.system === name).map((m) => m.ttft[q]));
    for (const q of ['p50', 'p99'] as const) {
      const router = ttft('switchyard', q);
      const nginx = ttft('nginx', q);
      bars.check('performance', `streaming TTFT ${q} ≤ 1.2× nginx (${plan.streams} streams over ${plan.streamArrivalMs / 1000} s${plan.streamRounds > 1 ? `, median of ${plan.streamRounds} rounds` : ''})`, router > 0 && nginx > 0 && router <= 1.2 * nginx, `${ms(router)} vs ${ms(nginx)} ms = ${ratio(router / nginx)}`);
    }

    const facts = runFacts(`npm run bench -- proxy-overhead ${argv.join(' ')}`.trim());
    const scavenges = (m: Measurement) => (m.routerScavenges === undefined ? '-' : `${m.routerScavenges.count} (${m.routerScavenges.meanMs.toFixed(1)})`);
    const row = (m: Measurement, extra: string) =>
      `| ${m.system} | ${extra} | ${m.run.ok} | ${m.run.failed} | ${m.rps.toFixed(0)} | ${ms(m.e2e.p50)} | ${ms(m.e2e.p99)} | ${ms(m.ttft.p50)} | ${ms(m.ttft.p99)} | ${pct(m.systemCpu)} | ${cpuPerRequestUs(m).toFixed(0)} | ${m.clientCoreBusy === undefined ? '-' : pct(m.clientCoreBusy)} | ${m.tcpRetransmits ?? '-'} | ${m.steal === undefined ? '-' : pct(m.steal)} | ${m.routerQueued ?? '-'} | ${scavenges(m)} | ${m.run.generatorBottleneck ?? 'kept up'} |`;
    const header = '| system | load | ok | failed | req/s | latency p50 ms | latency p99 ms | TTFT p50 ms | TTFT p99 ms | system CPU (of its core) | system CPU µs per request | client core busy | TCP retransmits | CPU steal (machine) | queued in the router | router scavenges (mean pause ms) | load generator |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';
    const markdown = [
      factsLine(facts),
      '',
      `Systems: ${measured.map((s) => `${s.name} (${s.description})`).join('; ')}. ${pinned ? 'The proxies pinned to core 0; the engine and the load generator share core 1.' : 'Not pinned (taskset unavailable).'} The tail at half load starts every system again over the static engine (${halfSystems.find((s) => s.name === 'direct')?.description ?? 'nginx'}).`,
      '',
      bars.markdown(options),
      '',
      '### Throughput vs concurrency (closed loop, small non-streamed chat)',
      '',
      header,
      ...closed.map((m) => row(m, m.label)),
      '',
      '### Latency vs offered load (open loop, Poisson; latency from the scheduled send)',
      '',
      header,
      ...open.map((m) => row(m, m.label)),
      '',
      `### Streaming: ${plan.streams} streams (60 tokens, 50 ms apart) arriving over ${plan.streamArrivalMs / 1000} s`,
      '',
      header,
      ...streams.map((m) => row(m, m.label)),
      '',
      `### The tail at half load: ${halfRate} req/s (50% of the router's max above), open loop, over the static engine`,
      '',
      "The engine simulator, on the load generator's core, spends about as much CPU on a request as a proxy: at this rate it kept that core so busy that the engine's own p99 was decided by the machine (loadtest/scenarios/baselines/static-engine.ts has the figures). nginx answering at once keeps core 1 mostly idle, so the tail each system adds is what these runs show; the rate is half the router's maximum over the simulator, as before. The bare node:http + undici forwarder (loadtest/scenarios/baselines/bare-forwarder.ts) is the floor a Node proxy shows here: a long run it has too is not the router's own.",
      '',
      header,
      ...half.map((m) => row(m, m.label)),
      '',
      'Charts: `proxy-overhead-throughput.svg`, `proxy-overhead-latency-p99.svg`, `proxy-overhead-latency-p50.svg`.',
    ].join('\n');
    const charts = [
      {
        name: 'throughput',
        svg: lineChart({
          title: 'Throughput vs concurrency (small non-streamed chat)',
          xLabel: 'concurrent clients',
          yLabel: 'requests/s',
          series: measured.map((s) => ({ name: s.name, dashed: s.name === 'direct', points: closed.filter((m) => m.system === s.name).map((m) => [Number(m.label.split(' ')[1]), m.rps] as const) })),
        }),
      },
      ...(['p99', 'p50'] as const).map((q) => ({
        name: `latency-${q}`,
        svg: lineChart({
          title: `Latency ${q} vs offered load (open loop)`,
          xLabel: 'offered requests/s',
          yLabel: `latency ${q} ms`,
          logY: true,
          series: measured.map((s) => ({ name: s.name, dashed: s.name === 'direct', points: open.filter((m) => m.system === s.name).map((m) => [m.offered, m.e2e[q]] as const) })),
        }),
      })),
    ];
    writeResults(options, 'proxy-overhead', facts, { plan, systems: measured, halfSystems, bars: bars.list, closed: closed.map(withoutHistograms), open: open.map(withoutHistograms), streams: streams.map(withoutHistograms), half: half.map(withoutHistograms) }, markdown, charts);
    return bars.pass(options) ? 0 : 1;
  } finally {
    await stopAll(systems);
    await engines?.stop();
  }
}

runIfMain(import.meta.url, proxyOverhead);

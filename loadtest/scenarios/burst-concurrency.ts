/**
 * `npm run bench -- burst-concurrency`: the second seed report. First
 * 10,000 non-streamed requests at 2,000 concurrency (`ab -n 10000 -c 2000`),
 * then 10,000 concurrent long-lived streams held open on one router process.
 * `/livez` is sampled from a process of its own throughout; the router's
 * resident memory and open request count are sampled too.
 *
 *   npm run bench -- burst-concurrency [--quick | --smoke] [--streams N]
 */
import { fitToFileLimit } from '../../router/admission/router-pressure.ts';
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { summarize } from '../bench/stats.ts';
import { lineChart } from '../report/svg-chart.ts';
import { startProbe } from './livez-probe.ts';
import { measure, type Measurement } from './measure.ts';
import { Bars, factsLine, ms, pct, runFacts, runIfMain, scenarioOptions, withoutHistograms, writeResults } from './results.ts';
import { rssBytes, SAFE_START_OFF, startEngineProcesses, startRouterSystem, type System } from './systems.ts';

const MODEL = 'burst-model';
const REQUEST: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: false, tools: false, promptBytes: 0, headers: { 'x-sim-ttft-ms': '20', 'x-sim-itl-ms': '2', 'x-sim-output-tokens': '16' }, users: 0, checkIds: true };
/** One token a second: long-lived, yet light enough that 10,000 streams fit on two shared cores. */
function longStream(tokens: number): RequestTemplate {
  return { ...REQUEST, stream: true, headers: { 'x-sim-ttft-ms': '50', 'x-sim-itl-ms': '1000', 'x-sim-output-tokens': String(tokens) } };
}
const GIB = 2 ** 30;

const PLANS = {
  full: { burstRequests: 10_000, burstConcurrency: 2_000, streams: 10_000, streamArrivalS: 10, streamTokens: 30 },
  quick: { burstRequests: 10_000, burstConcurrency: 2_000, streams: 10_000, streamArrivalS: 10, streamTokens: 30 },
  smoke: { burstRequests: 1_000, burstConcurrency: 200, streams: 500, streamArrivalS: 2, streamTokens: 5 },
} as const;

/** Streams one proxy process can hold here: two descriptors each (client and engine side), as the router itself computes. */
function streamsThatFit(wanted: number): { streams: number; openFiles: number | undefined } {
  const { limits, openFiles } = fitToFileLimit({ maxConnections: wanted, maxInFlight: wanted, eventLoopLagMs: 0 });
  // A few descriptors of headroom for probes, scrapes and the model list.
  return { streams: limits.maxInFlight < wanted ? limits.maxInFlight - 50 : wanted, openFiles };
}

/** Samples the router's memory and open requests every second while `run` goes on. */
async function sampled<T>(router: System, run: () => Promise<T>): Promise<{ result: T; rss: [number, number][]; inFlight: [number, number][] }> {
  const start = performance.now();
  const rss: [number, number][] = [];
  const inFlight: [number, number][] = [];
  const timer = setInterval(() => {
    const at = (performance.now() - start) / 1000;
    rss.push([at, rssBytes(router.pids())]);
    fetch(`${router.adminUrl as string}/metrics`)
      .then((r) => r.text())
      .then((text) => {
        const line = text.split('\n').find((l) => l.startsWith('switchyard_in_flight_requests '));
        if (line !== undefined) inFlight.push([at, Number(line.split(' ')[1])]);
      })
      .catch(() => {});
  }, 1000);
  try {
    return { result: await run(), rss, inFlight };
  } finally {
    clearInterval(timer);
  }
}

/** Entry point; returns the exit code. */
export async function burstConcurrency(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'burst-concurrency');
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const wantedStreams = Number(options.extra['streams'] ?? plan.streams);
  const { streams, openFiles } = streamsThatFit(wantedStreams);
  const engines = await startEngineProcesses(2, MODEL, ['--max-seqs', '20000']);
  let router: System | undefined;
  try {
    // This scenario measures how many connections and streams the router holds, not a cold start
    // (`bench cold-start` does): the safe start for engines of unknown capacity would shed streams
    // the 20,000-slot engines have room for, so it is off here.
    router = await startRouterSystem(engines.urls, { args: SAFE_START_OFF });
    const generators = { processes: options.generators || 2, quiet: options.quiet };
    const probe = startProbe(`${router.adminUrl as string}/livez`);

    const burstSpec: Omit<LoadSpec, 'target'> = { request: REQUEST, mode: { kind: 'closed', concurrency: plan.burstConcurrency }, warmupMs: 0, requests: plan.burstRequests, idPrefix: 'burst', seed: 1 };
    const burst = await sampled(router, () => measure(router as System, burstSpec, generators, `${plan.burstRequests} requests at ${plan.burstConcurrency} concurrent`));
    const rssAfterBurst = rssBytes(router.pids());

    const streamSpec: Omit<LoadSpec, 'target'> = {
      request: longStream(plan.streamTokens),
      mode: { kind: 'open', ratePerS: streams / plan.streamArrivalS, maxConnections: streams },
      warmupMs: 0,
      requests: streams,
      idPrefix: 'streams',
      seed: 2,
    };
    const held = await sampled(router, () => measure(router as System, streamSpec, generators, `${streams} concurrent streams`));
    const livez = await probe.stop();

    const bars = new Bars();
    const failed = (m: Measurement) => `${m.run.failed}${m.run.failed > 0 ? ` (${Object.entries(m.run.failureKinds).map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}`;
    bars.check('correctness', `burst: no resets or errors; every answer 200, or 429 with Retry-After`, burst.result.run.failed === 0, `${burst.result.run.ok} × 200, ${burst.result.run.shed} × 429, ${failed(burst.result)} failed`);
    bars.check('correctness', `${streams} streams: zero errors, every stream ends with [DONE]`, held.result.run.failed === 0 && held.result.run.shed === 0 && held.result.run.ok === streams, `${held.result.run.ok} complete, ${held.result.run.shed} shed, ${failed(held.result)} failed`);
    const peakInFlight = Math.max(0, ...held.inFlight.map(([, n]) => n));
    bars.check('correctness', 'the streams were open at the same time', peakInFlight >= streams * 0.98, `peak ${peakInFlight} open in the router`);
    bars.check('performance', `router RSS < 1 GiB with ${streams} streams open`, held.result.peakRss < GIB, `peak ${(held.result.peakRss / 2 ** 20).toFixed(0)} MiB`);
    const probeFailures = livez.filter((l) => l < 0).length;
    const probeOk = summarize(livez.filter((l) => l >= 0));
    bars.check('correctness', '/livez answered 200 throughout (sampled every 50 ms from its own process)', probeFailures === 0 && livez.length > 0, `${livez.length - probeFailures}/${livez.length}, p50 ${ms(probeOk.p50)} ms, p99 ${ms(probeOk.p99)} ms, max ${ms(probeOk.max)} ms`);

    const facts = runFacts(`npm run bench -- burst-concurrency ${argv.join(' ')}`.trim());
    const fdNote =
      streams < wantedStreams
        ? `\n\n${wantedStreams} streams were asked for; this machine's open-file limit is ${openFiles ?? '?'} (hard limit; raising it needs privileges this sandbox does not grant), and any proxy needs two descriptors per open stream (client side and engine side), so one process here can hold at most ${Math.floor(((openFiles ?? 0) - 64) / 2)}. The run uses ${streams}.`
        : '';
    const row = (m: Measurement) => `| ${m.label} | ${m.run.ok} | ${m.run.shed} | ${m.run.failed} | ${ms(m.e2e.p50)} | ${ms(m.e2e.p99)} | ${ms(m.ttft.p50)} | ${ms(m.ttft.p99)} | ${pct(m.systemCpu)} | ${(m.peakRss / 2 ** 20).toFixed(0)} | ${m.run.generatorBottleneck ?? 'kept up'} |`;
    const markdown = [
      factsLine(facts),
      '',
      `One router (${router.description}) over 2 engine simulators; ${generators.processes} load-generator processes. Burst: small non-streamed chat, closed loop. Streams: ${plan.streamTokens} tokens 1 s apart (~${plan.streamTokens} s each), arriving over ${plan.streamArrivalS} s.${fdNote}`,
      '',
      bars.markdown(options),
      '',
      '| run | 200 | 429 | failed | latency p50 ms | latency p99 ms | TTFT p50 ms | TTFT p99 ms | router CPU | router peak RSS MiB | load generator |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      row(burst.result),
      row(held.result),
      '',
      `Router RSS after the burst: ${(rssAfterBurst / 2 ** 20).toFixed(0)} MiB. Chart: \`burst-concurrency-streams.svg\` (open requests and RSS over the stream run).`,
    ].join('\n');
    const chart = lineChart({
      title: `${streams} long-lived streams on one router process`,
      xLabel: 'seconds',
      yLabel: 'open requests / RSS MiB',
      series: [
        { name: 'open requests', points: held.inFlight },
        { name: 'router RSS (MiB)', dashed: true, points: held.rss.map(([t, b]) => [t, b / 2 ** 20] as const) },
      ],
      thresholds: [{ label: '1 GiB', y: 1024 }],
    });
    writeResults(options, 'burst-concurrency', facts, { plan, streams, openFiles, bars: bars.list, burst: withoutHistograms(burst.result), streamsRun: withoutHistograms(held.result), rss: held.rss, inFlight: held.inFlight, livez }, markdown, [{ name: 'streams', svg: chart }]);
    return bars.pass(options) ? 0 : 1;
  } finally {
    await router?.stop();
    await engines.stop();
  }
}

runIfMain(import.meta.url, burstConcurrency);

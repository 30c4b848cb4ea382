/**
 * `npm run bench -- cpu-per-request`: what one small non-streamed chat
 * request costs each proxy in CPU, with keep-alive and with a new connection
 * per request, measured the way an operator would (`ab -c 64`, `-k` or not)
 * against one engine simulator. Every proxy is pinned to core 0 (all its
 * threads: `taskset` applies to the whole process), ab and the engine to
 * core 1. CPU comes from /proc (user + system, so the kernel work of each
 * proxy's sockets counts), divided by the requests ab completed.
 *
 * Systems: nginx, switchyard with its default policy and with round-robin,
 * the vLLM project's router, and a bare `node:http` + undici forwarder
 * (loadtest/scenarios/baselines/bare-forwarder.ts): the floor Node allows, so what
 * switchyard costs above it is the router's own. Rounds interleave the
 * systems so drift hits them alike; each figure is the median of the
 * rounds with the spread beside it.
 *
 * A new connection's extra cost is also measured at an equal offered rate
 * (the benchmark generator in open loop, a new connection per request or
 * reused ones) for switchyard and the bare forwarder. Under ab's closed loop
 * a slower proxy leaves ab, on the other core, asleep more often (1.0-1.25
 * voluntary context switches a request through switchyard against 0.38
 * through the bare forwarder, 2026-12-02), and on this virtual machine every
 * wake-up of a sleeping peer costs the waker more: the extra a new connection
 * shows under ab grows with how much slower a proxy already is. At the same
 * rate both proxies wake a client that waits alike, so the difference is
 * each one's own per-connection work; that is what the bar reads.
 *
 * `--breakdown DIR` adds a profiled run of switchyard and of the bare
 * forwarder per connection mode and reports where each one's CPU goes by
 * stage, and the router's extra at each (loadtest/report/request-breakdown.ts).
 *
 * `--before DIR` adds another checkout of switchyard (a worktree of an
 * earlier commit, `npm ci` done there) to the interleaved ab rounds, for a
 * before/after in one run.
 *
 * `--access-log json|text` adds switchyard with its access log on (to a pipe the harness reads),
 * to the same rounds: what one line per request costs.
 *
 * `--tracing RATIO[,RATIO...]` adds switchyard with OpenTelemetry tracing on at each sampling
 * ratio (e.g. `0.01,1`), exporting OTLP/HTTP protobuf to a sink in this process that answers 200
 * (baselines/otlp-sink.ts): what a span per request costs, sampled or not. With 0.01 among them,
 * a bar holds 1% sampling to 1.05× switchyard without tracing; with `--before`, one holds today's
 * switchyard (tracing and the access log off) within the earlier checkout's range of rounds.
 *
 *   npm run bench -- cpu-per-request [--quick | --smoke] [--peer off] [--breakdown DIR] [--before DIR] [--access-log json|text] [--tracing RATIOS]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { abVersion, runAb, type AbResult } from '../../tests/kit/ab.ts';
import type { RequestTemplate } from '../bench/load-spec.ts';
import { canPin } from '../../tests/kit/processes.ts';
import { stageTimes, STAGES, type Stage } from '../report/request-breakdown.ts';
import { Bars, factsLine, medianOf, ratio, runFacts, runIfMain, scenarioOptions, type ScenarioOptions, writeResults } from './results.ts';
import { measure } from './measure.ts';
import { startOtlpSink, type OtlpSink } from './baselines/otlp-sink.ts';
import { BARE_FORWARDER_NAME, cpuMs, cpuProfileArgs, routerCheckout, SAFE_START_OFF, startBareForwarder, startEngineProcesses, startNginxProxy, startPeer, startRouterSystem, stopAll, type Engines, type RouterCheckout, type System } from './systems.ts';

const MODEL = 'bench';
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], max_tokens: 16 });
const CONCURRENCY = 64;
/** The equal-rate runs' request: a small non-streamed chat like ab's, as the benchmark generator builds it. */
const REQUEST: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: false, tools: false, promptBytes: 0, headers: {}, users: 0, checkIds: true };
/** Compared at an equal rate: the router and the floor its per-connection work is read against. */
const EQUAL_RATE_SYSTEMS = ['switchyard', BARE_FORWARDER_NAME];

type Mode = 'keep-alive' | 'new connection';
const MODES: readonly Mode[] = ['keep-alive', 'new connection'];

interface Plan {
  readonly rounds: number;
  /** Requests per ab run, by mode. */
  readonly requests: Readonly<Record<Mode, number>>;
  /**
   * Keep-alive traffic each system gets first, in seconds: JIT warm, and a
   * cold router's safe start grown to the load (it grows once a scrape,
   * every second by default), so rounds measure the steady state.
   */
  readonly primeSeconds: number;
  /** The equal-rate runs: offered rate (below every compared system's new-connection maximum here), warm-up and measured time. */
  readonly equalRate: { readonly ratePerS: number; readonly warmupMs: number; readonly durationMs: number };
}

const PLANS: Record<'full' | 'quick' | 'smoke', Plan> = {
  full: { rounds: 5, requests: { 'keep-alive': 40_000, 'new connection': 12_000 }, primeSeconds: 12, equalRate: { ratePerS: 2_000, warmupMs: 1_000, durationMs: 6_000 } },
  quick: { rounds: 3, requests: { 'keep-alive': 20_000, 'new connection': 8_000 }, primeSeconds: 8, equalRate: { ratePerS: 2_000, warmupMs: 1_000, durationMs: 4_000 } },
  smoke: { rounds: 1, requests: { 'keep-alive': 2_000, 'new connection': 1_000 }, primeSeconds: 1, equalRate: { ratePerS: 500, warmupMs: 500, durationMs: 1_000 } },
};

/** One ab run against one system. */
interface Sample {
  readonly system: string;
  readonly mode: Mode;
  readonly round: number;
  readonly ab: AbResult;
  /** CPU microseconds of the system's processes per completed request. */
  readonly cpuUs: number;
}

/** One open-loop run at the plan's equal rate against one system. */
interface RateSample {
  readonly system: string;
  readonly mode: Mode;
  readonly round: number;
  /** Answered requests a second in the measured window. */
  readonly rps: number;
  /** Requests not answered 200 (failed or shed). */
  readonly failed: number;
  /** CPU microseconds of the system's processes per answered request. */
  readonly cpuUs: number;
}

/** The name of switchyard with tracing on at `ratio`. */
const tracingName = (ratio: number) => `switchyard tracing ${+(ratio * 100).toPrecision(3)}%`;

/** The sampling ratios of `--tracing`; empty without it. */
function tracingRatios(value: string | undefined): number[] {
  if (value === undefined) return [];
  const ratios = value.split(',').map(Number);
  if (ratios.some((r) => !(r >= 0 && r <= 1))) throw new Error('--tracing: sampling ratios between 0 and 1, comma-separated, e.g. 0.01,1');
  return ratios;
}

async function startSystems(
  engines: Engines,
  core: number | undefined,
  peer: boolean,
  before: RouterCheckout | undefined,
  accessLog: string | undefined,
  tracing: { readonly ratios: readonly number[]; readonly sink: OtlpSink | undefined },
): Promise<System[]> {
  const upstream = engines.urls[0] as string;
  const at = core === undefined ? {} : { core };
  const systems: System[] = [];
  try {
    systems.push(await startNginxProxy(engines.urls, core));
    systems.push(await startRouterSystem(engines.urls, at));
    if (before !== undefined) systems.push(await startRouterSystem(engines.urls, { ...at, checkout: before, args: beforeArgs(before) }));
    systems.push(await startRouterSystem(engines.urls, { ...at, name: 'switchyard round-robin', args: ['--routing-policy', 'round-robin'] }));
    if (accessLog !== undefined) systems.push(await startRouterSystem(engines.urls, { ...at, name: `switchyard access log ${accessLog}`, args: ['--access-log', accessLog] }));
    for (const ratio of tracing.ratios) {
      const args = ['--tracing-enabled', '--tracing-sampler-arg', String(ratio), '--tracing-endpoint', tracing.sink?.url ?? ''];
      systems.push(await startRouterSystem(engines.urls, { ...at, name: tracingName(ratio), args }));
    }
    const vllmRouter = peer ? await startPeer(engines.urls, MODEL, core) : { unavailable: 'turned off with --peer off' };
    if ('unavailable' in vllmRouter) console.error(`peer router skipped: ${vllmRouter.unavailable}`);
    else systems.push(vllmRouter);
    systems.push(await startBareForwarder(upstream, core));
  } catch (err) {
    await stopAll(systems);
    throw err;
  }
  return systems;
}

async function sample(system: System, mode: Mode, round: number, requests: number, bodyFile: string, clientCore: number | undefined): Promise<Sample> {
  const pids = system.pids();
  const before = cpuMs(pids);
  const ab = await runAb({ url: `${system.url}/v1/chat/completions`, bodyFile, requests, concurrency: CONCURRENCY, keepAlive: mode === 'keep-alive', ...(clientCore === undefined ? {} : { core: clientCore }) });
  const cpuUs = ab.complete > 0 ? ((cpuMs(pids) - before) * 1000) / ab.complete : Number.NaN;
  console.error(`${system.name} ${mode} round ${round + 1}: ${ab.requestsPerSecond.toFixed(0)} req/s, ${cpuUs.toFixed(1)} µs CPU per request, ${ab.failed} failed, ${ab.non2xx} non-2xx`);
  return { system: system.name, mode, round, ab, cpuUs };
}

async function sampleAtRate(system: System, mode: Mode, round: number, plan: Plan, clientCore: number | undefined): Promise<RateSample> {
  const { ratePerS, warmupMs, durationMs } = plan.equalRate;
  const spec = { request: REQUEST, mode: { kind: 'open' as const, ratePerS, maxConnections: 256 }, warmupMs, durationMs, idPrefix: `rate-${round}-${mode === 'keep-alive' ? 'ka' : 'nc'}`, seed: round, newConnections: mode === 'new connection' };
  const m = await measure(system, spec, { processes: 1, quiet: true, ...(clientCore === undefined ? {} : { core: clientCore }) }, `${mode} at ${ratePerS} req/s, round ${round + 1}`);
  // systemCpu is a share of one core over the whole run (warm-up at the same rate included).
  return { system: system.name, mode, round, rps: m.rps, failed: m.run.failed + m.run.shed, cpuUs: (m.systemCpu * 1e6) / m.rps };
}

async function prime(system: System, plan: Plan, bodyFile: string, clientCore: number | undefined, keepAlive = true): Promise<void> {
  await runAb({ url: `${system.url}/v1/chat/completions`, bodyFile, requests: 10_000_000, seconds: plan.primeSeconds, concurrency: CONCURRENCY, keepAlive, ...(clientCore === undefined ? {} : { core: clientCore }) });
}

/** Share of a profiled run's busy time by stage, per connection mode. */
type StageShares = Record<Mode, Record<Stage, number>>;

/** One system the breakdown profiles: switchyard, an earlier checkout of it, and the floor beneath them, so the difference by stage is a router's own. */
interface Profiled {
  readonly name: string;
  /** Folder name for its profiles. */
  readonly slug: string;
  readonly start: (nodeArgs: readonly string[]) => Promise<System>;
}

/** Where each profiled system spends one request's CPU, per mode: share of the profiled busy time by stage, by system name. */
async function breakdown(profiled: readonly Profiled[], dir: string, plan: Plan, bodyFile: string, clientCore: number | undefined): Promise<Map<string, StageShares>> {
  const result = new Map<string, StageShares>();
  for (const mode of MODES) {
    for (const { name, slug, start } of profiled) {
      const profileDir = join(dir, `${slug}-${mode.replace(' ', '-')}`);
      rmSync(profileDir, { recursive: true, force: true });
      mkdirSync(profileDir, { recursive: true });
      const system = await start(cpuProfileArgs(profileDir));
      try {
        // In the mode profiled: the profile's shares are of all the traffic the system served.
        await prime(system, plan, bodyFile, clientCore, mode === 'keep-alive');
        await sample(system, mode, 0, plan.requests[mode], bodyFile, clientCore);
      } finally {
        await system.stop();
      }
      // The main thread's profile (thread 0 in Node's file name; the router's probe worker writes one of its own).
      const file = readdirSync(profileDir).find((entry) => /\.0\.\d+\.cpuprofile$/.test(entry));
      if (file === undefined) throw new Error(`no CPU profile written in ${profileDir}`);
      const { busy, byStage } = stageTimes(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Parameters<typeof stageTimes>[0]);
      const shares = result.get(name) ?? ({} as StageShares);
      shares[mode] = Object.fromEntries(STAGES.map((stage) => [stage, (byStage.get(stage) ?? 0) / busy])) as Record<Stage, number>;
      result.set(name, shares);
    }
  }
  return result;
}

/**
 * The settings an earlier checkout runs at in the ab rounds: the defaults this checkout runs at, so
 * the bar compares code with code. Only a checkout older than b4caff9 gets the safe start off: it
 * held an engine this fast at 4 requests for good. (One commit measured beside itself with the safe
 * start off read 5.5-6 µs a request more with it on, which the bar took for a regression.)
 */
function beforeArgs(before: RouterCheckout): readonly string[] {
  try {
    execFileSync('git', ['-C', before.dir, 'merge-base', '--is-ancestor', 'b4caff9', 'HEAD'], { stdio: 'ignore' });
    return [];
  } catch {
    return SAFE_START_OFF;
  }
}

/**
 * The systems `--breakdown` profiles over `engines`: switchyard, the `--before` checkout when given, the bare forwarder.
 * Every router with the safe start off: a profile covers the priming too, when a cold router's safe start is still growing and its queue holds requests.
 */
function profiledSystems(engines: Engines, core: number | undefined, before: RouterCheckout | undefined): Profiled[] {
  const at = core === undefined ? {} : { core };
  return [
    { name: 'switchyard', slug: 'switchyard', start: (nodeArgs) => startRouterSystem(engines.urls, { ...at, nodeArgs, args: SAFE_START_OFF }) },
    ...(before === undefined ? [] : [{ name: before.name, slug: `switchyard-${before.commit}`, start: (nodeArgs: readonly string[]) => startRouterSystem(engines.urls, { ...at, nodeArgs, checkout: before, args: SAFE_START_OFF }) }]),
    { name: BARE_FORWARDER_NAME, slug: 'bare-forwarder', start: (nodeArgs) => startBareForwarder(engines.urls[0] as string, core, nodeArgs) },
  ];
}

/** Entry point; returns the exit code. */
export async function cpuPerRequest(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'cpu-per-request');
  const ratios = tracingRatios(options.extra['tracing']);
  const plan = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const version = abVersion();
  if (version === undefined) throw new Error('ab (ApacheBench) is not installed: apt-get install apache2-utils');
  const pinned = canPin();
  const core = pinned ? 0 : undefined;
  const clientCore = pinned ? 1 : undefined;
  const scratch = mkdtempSync(join(tmpdir(), 'switchyard-cpu-'));
  const bodyFile = join(scratch, 'body.json');
  writeFileSync(bodyFile, BODY);
  const engines = await startEngineProcesses(1, MODEL, ['--max-seqs', '100000', '--ttft-ms', '0', '--itl-ms', '0', '--output-tokens', '16'], clientCore);
  let systems: System[] = [];
  const samples: Sample[] = [];
  const rateSamples: RateSample[] = [];
  let stages: Map<string, StageShares> | undefined;
  const before = routerCheckout(options.extra['before']);
  const sink = ratios.length === 0 ? undefined : await startOtlpSink();
  try {
    systems = await startSystems(engines, core, options.extra['peer'] !== 'off', before, options.extra['access-log'], { ratios, sink });
    for (const system of systems) await prime(system, plan, bodyFile, clientCore);
    for (let round = 0; round < plan.rounds; round++) {
      for (const mode of MODES) for (const system of systems) samples.push(await sample(system, mode, round, plan.requests[mode], bodyFile, clientCore));
    }
    const atEqualRate = systems.filter((system) => EQUAL_RATE_SYSTEMS.includes(system.name));
    for (let round = 0; round < plan.rounds; round++) {
      for (const mode of MODES) for (const system of atEqualRate) rateSamples.push(await sampleAtRate(system, mode, round, plan, clientCore));
    }
    await stopAll(systems);
    systems = [];
    const breakdownDir = options.extra['breakdown'];
    if (breakdownDir !== undefined) stages = await breakdown(profiledSystems(engines, core, before), breakdownDir, plan, bodyFile, clientCore);
  } finally {
    await stopAll(systems);
    await engines.stop();
    await sink?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
  if (sink !== undefined) console.error(`OTLP sink: ${sink.received.exports} exports, ${(sink.received.bytes / 1e6).toFixed(1)} MB`);
  return report(argv, options, samples, rateSamples, stages, version, plan.equalRate.ratePerS);
}

function report(argv: readonly string[], options: ScenarioOptions<'cpu-per-request'>, samples: readonly Sample[], rateSamples: readonly RateSample[], stages: Map<string, StageShares> | undefined, abVersionText: string, equalRate: number): number {
  const names = [...new Set(samples.map((s) => s.system))];
  const cost = (system: string, mode: Mode) => medianOf(samples.filter((s) => s.system === system && s.mode === mode).map((s) => s.cpuUs));
  const has = (system: string) => names.includes(system);
  const bars = new Bars();
  const failed = samples.reduce((n, s) => n + s.ab.failed + s.ab.non2xx, 0) + rateSamples.reduce((n, s) => n + s.failed, 0);
  bars.check('correctness', 'every request answered 2xx', failed === 0, `${failed} failed or non-2xx of ${samples.reduce((n, s) => n + s.ab.complete, 0)} under ab and ${rateSamples.length} runs at an equal rate`);
  if (has('vllm-router')) {
    const router = cost('switchyard', 'keep-alive').median;
    const peer = cost('vllm-router', 'keep-alive').median;
    // An earlier checkout measured in the same rounds (`--before`), and the floor, read against the same peer.
    const beside = names.filter((name) => name.startsWith('switchyard@')).concat(has(BARE_FORWARDER_NAME) ? [BARE_FORWARDER_NAME] : []);
    const others = beside.map((name) => `; ${name} ${ratio(cost(name, 'keep-alive').median / peer)}`).join('');
    bars.check('performance', 'keep-alive CPU per request ≤ 1.1× vllm-router (median of rounds)', router <= 1.1 * peer, `${router.toFixed(1)} vs ${peer.toFixed(1)} µs = ${ratio(router / peer)}${others}`);
  }
  if (has(tracingName(0.01))) {
    const [traced, plain] = [cost(tracingName(0.01), 'keep-alive').median, cost('switchyard', 'keep-alive').median];
    bars.check('performance', 'tracing at 1% sampling ≤ 1.05× switchyard without tracing (keep-alive, median of rounds)', traced <= 1.05 * plain, `${traced.toFixed(1)} vs ${plain.toFixed(1)} µs = ${ratio(traced / plain)}`);
  }
  const earlier = names.find((name) => name.startsWith('switchyard@'));
  if (earlier !== undefined) {
    const within = MODES.map((mode) => ({ mode, today: cost('switchyard', mode).median, then: cost(earlier, mode) }));
    bars.check(
      'performance',
      `switchyard (tracing and the access log off) within ${earlier}'s range of rounds, each connection mode`,
      within.every(({ today, then }) => today <= then.max),
      within.map(({ mode, today, then }) => `${mode} ${today.toFixed(1)} µs vs ${then.min.toFixed(1)}-${then.max.toFixed(1)} µs`).join('; '),
    );
  }
  const policyExtra = cost('switchyard', 'keep-alive').median - cost('switchyard round-robin', 'keep-alive').median;
  bars.check('performance', "the default policy's extra CPU over round-robin ≤ 5 µs per request (keep-alive)", policyExtra <= 5, `${policyExtra.toFixed(1)} µs`);
  // What a new connection costs above a reused one: the router's share is what it adds over the bare forwarder's.
  // Read at an equal rate (see the module comment); ab's closed-loop figures are shown beside it.
  const rateCost = (system: string, mode: Mode) => medianOf(rateSamples.filter((s) => s.system === system && s.mode === mode).map((s) => s.cpuUs));
  const perConnection = (system: string, of: typeof cost) => of(system, 'new connection').median - of(system, 'keep-alive').median;
  const [routerAtRate, bareAtRate] = [perConnection('switchyard', rateCost), perConnection(BARE_FORWARDER_NAME, rateCost)];
  bars.check(
    'performance',
    `a new connection's extra CPU at an equal rate (${equalRate} req/s) ≤ 1.2× the bare node:http + undici forwarder's (the router's own per-connection work)`,
    routerAtRate <= 1.2 * bareAtRate,
    `${routerAtRate.toFixed(1)} vs ${bareAtRate.toFixed(1)} µs (under ab's closed loop: ${perConnection('switchyard', cost).toFixed(1)} vs ${perConnection(BARE_FORWARDER_NAME, cost).toFixed(1)} µs)`,
  );

  const facts = runFacts(`npm run bench -- cpu-per-request ${argv.join(' ')}`.trim());
  const reference = (mode: Mode, system: string) => (has(system) ? cost(system, mode).median : Number.NaN);
  const rows = MODES.flatMap((mode) =>
    names.map((system) => {
      const c = cost(system, mode);
      const rps = medianOf(samples.filter((s) => s.system === system && s.mode === mode).map((s) => s.ab.requestsPerSecond));
      return `| ${mode} | ${system} | ${c.median.toFixed(1)} | ${c.min.toFixed(1)}-${c.max.toFixed(1)} | ${ratio(c.median / reference(mode, 'vllm-router'))} | ${ratio(c.median / reference(mode, BARE_FORWARDER_NAME))} | ${ratio(c.median / reference(mode, 'nginx'))} | ${rps.median.toFixed(0)} |`;
    }),
  );
  const rounds = Math.max(...samples.map((s) => s.round)) + 1;
  const markdown = [
    factsLine(facts),
    '',
    `Small non-streamed chat (${BODY.length} B body, 16 tokens answered), \`ab ${abVersionText}\` at ${CONCURRENCY} concurrent with \`-k\` (keep-alive) and without (a new connection per request); ${rounds} interleaved round${rounds === 1 ? '' : 's'}. Proxies pinned to core 0, ab and the engine simulator to core 1. CPU is user + system time of the proxy's processes from /proc over the run, divided by the requests ab completed.`,
    '',
    bars.markdown(options),
    '',
    '| connections | system | CPU µs per request (median) | spread | vs vllm-router | vs bare forwarder | vs nginx | req/s (median) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `At an equal rate: the benchmark generator in open loop at ${equalRate} requests a second (Poisson arrivals), each request on a new connection (\`Connection: close\`) or on reused ones; pinned as above. CPU per answered request; the extra is what a new connection adds over a reused one.`,
    '',
    '| system | keep-alive CPU µs per request (spread) | new connection (spread) | extra for a new connection |',
    '|---|---|---|---|',
    ...EQUAL_RATE_SYSTEMS.filter((system) => rateSamples.some((s) => s.system === system)).map((system) => {
      const [reused, fresh] = [rateCost(system, 'keep-alive'), rateCost(system, 'new connection')];
      return `| ${system} | ${reused.median.toFixed(1)} (${reused.min.toFixed(1)}-${reused.max.toFixed(1)}) | ${fresh.median.toFixed(1)} (${fresh.min.toFixed(1)}-${fresh.max.toFixed(1)}) | ${(fresh.median - reused.median).toFixed(1)} |`;
    }),
    ...(stages === undefined ? [] : ['', breakdownTable(stages, (name, mode) => cost(name, mode).median)]),
  ].join('\n');
  writeResults(options, 'cpu-per-request', facts, { samples, rateSamples, stages: stages === undefined ? undefined : Object.fromEntries(stages) }, markdown);
  return bars.pass(options) ? 0 : 1;
}

function breakdownTable(stages: ReadonlyMap<string, StageShares>, perRequest: (name: string, mode: Mode) => number): string {
  const names = [...stages.keys()];
  const routers = names.filter((name) => name !== BARE_FORWARDER_NAME);
  const micros = (name: string, mode: Mode, stage: Stage) => (stages.get(name)?.[mode][stage] ?? Number.NaN) * perRequest(name, mode);
  const table = (mode: Mode) => [
    `| stage (${mode}) | ${names.map((name) => `${name} µs (share)`).join(' | ')} | ${routers.map((name) => `${name}: extra over the floor`).join(' | ')} |`,
    `|---|${names.map(() => '---|').join('')}${routers.map(() => '---|').join('')}`,
    ...STAGES.map((stage) => {
      const cells = names.map((name) => `${micros(name, mode, stage).toFixed(1)} (${(100 * (stages.get(name)?.[mode][stage] ?? Number.NaN)).toFixed(0)}%)`);
      const extras = routers.map((name) => (micros(name, mode, stage) - micros(BARE_FORWARDER_NAME, mode, stage)).toFixed(1));
      return `| ${stage} | ${cells.join(' | ')} | ${extras.join(' | ')} |`;
    }),
  ];
  return [
    "Where one request's CPU goes (switchyard with the default policy, and the bare node:http + undici forwarder beneath it; the routers with the safe start off, since a profile covers the priming too, when a cold router's safe start holds requests in its queue): each stage's share of a profiled run's busy time (`--cpu-prof`, module loading left out), times the system's median CPU per request above; the difference is what the router adds at that stage. `native` is time V8 could not attribute to JavaScript (libuv, the kernel under the event loop); the bare forwarder's own few functions count as `forward`.",
    '',
    ...table('keep-alive'),
    '',
    ...table('new connection'),
  ].join('\n');
}

runIfMain(import.meta.url, cpuPerRequest);

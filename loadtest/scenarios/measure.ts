/**
 * One measurement: load from the generator processes against one system,
 * with the system's own CPU use and peak memory taken over the same window,
 * so every row says whether the system or the generator was the limit.
 */
import { Histogram, type Percentiles } from '../bench/histogram.ts';
import { runGenerators, type GeneratorOptions, type GeneratorRun } from '../bench/generators.ts';
import { readFileSync } from 'node:fs';
import type { LoadSpec } from '../bench/load-spec.ts';
import { pct } from './results.ts';
import { coreTimes, cpuMs, rssBytes, type System } from './systems.ts';

const RSS_SAMPLE_MS = 250;
/** The core the load generators share (with the engine, in pinned scenarios) is this busy: the client side limited the run. */
const SATURATED_CORE = 0.9;

/** A run against one system, condensed for reports (histograms kept in `run`). */
export interface Measurement {
  readonly system: string;
  /** What varied in this run, e.g. `concurrency 32` or `500 req/s`. */
  readonly label: string;
  /** Successful requests per second over the measured window. */
  readonly rps: number;
  readonly e2e: Percentiles;
  readonly ttft: Percentiles;
  readonly itl: Percentiles;
  /** Share of one core the system's processes used over the run. */
  readonly systemCpu: number;
  /** Largest resident memory of the system's processes seen during the run (bytes). */
  readonly peakRss: number;
  /** Share of the load generators' core busy over the run (every process on it); undefined when not pinned. */
  readonly clientCoreBusy: number | undefined;
  /**
   * TCP segments the machine retransmitted during the run (all sockets, from
   * /proc/net/snmp). Loopback loses nothing, so any is the kernel dropping
   * under buffer pressure, and each costs at least the 200 ms minimum
   * retransmission timeout: a tail no proxy caused.
   */
  readonly tcpRetransmits: number | undefined;
  /**
   * Share of the machine's CPU time (all cores) the hypervisor stole during
   * the run, from /proc/stat; undefined off Linux. A pinned proxy whose core
   * is taken away for milliseconds at a time queues everything in flight:
   * a tail no proxy caused.
   */
  readonly steal: number | undefined;
  /**
   * Requests the router held in its own queue during the run, warm-up
   * included (`switchyard_queued_total`); undefined for systems without an
   * admin port. A queued request waited for the safe start or an engine,
   * not for the proxy's own work: rows say so.
   */
  readonly routerQueued: number | undefined;
  /**
   * The router's young-generation collections during the run, warm-up
   * included, and their mean pause (ms); undefined for systems without an
   * admin port. Each pause stalls every request the router holds, so a
   * mean of tens of ms is a tail of the router's own making.
   */
  readonly routerScavenges: { readonly count: number; readonly meanMs: number } | undefined;
  readonly run: GeneratorRun;
}

/** What a router's own metrics count that a run's figures need beside them. */
interface RouterCounters {
  /** Requests queued since it started (every priority: `switchyard_queued_total`). */
  readonly queued: number;
  /** Young-generation collections since it started, and the seconds they took (`nodejs_gc_duration_seconds{kind="minor"}`). */
  readonly scavenges: number;
  readonly scavengeSeconds: number;
}

/** The counters of the router at `adminUrl`; undefined when its metrics cannot be read. */
export async function routerCounters(adminUrl: string): Promise<RouterCounters | undefined> {
  try {
    const response = await fetch(`${adminUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) return undefined;
    let queued = 0;
    let scavenges = 0;
    let scavengeSeconds = 0;
    for (const line of (await response.text()).split('\n')) {
      const value = () => Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('switchyard_queued_total')) queued += value();
      else if (line.startsWith('nodejs_gc_duration_seconds_count{kind="minor"}')) scavenges = value();
      else if (line.startsWith('nodejs_gc_duration_seconds_sum{kind="minor"}')) scavengeSeconds = value();
    }
    return { queued, scavenges, scavengeSeconds };
  } catch {
    return undefined;
  }
}

/** TCP segments retransmitted since boot, from /proc/net/snmp; undefined where it cannot be read. */
export function tcpRetransmits(): number | undefined {
  try {
    const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((line) => line.startsWith('Tcp:'));
    const [names, values] = lines.map((line) => line.trim().split(/\s+/));
    const at = names?.indexOf('RetransSegs') ?? -1;
    return at < 0 ? undefined : Number(values?.[at]);
  } catch {
    return undefined;
  }
}

/** Sends `spec` (without a target) to `system` and measures it. */
export async function measure(system: System, spec: Omit<LoadSpec, 'target'>, generators: Omit<GeneratorOptions, 'label'>, label: string): Promise<Measurement> {
  const pids = system.pids();
  const countersBefore = system.adminUrl === undefined ? undefined : await routerCounters(system.adminUrl);
  const cpuBefore = cpuMs(pids);
  const clientCoreBefore = generators.core === undefined ? undefined : coreTimes(generators.core);
  const retransmitsBefore = tcpRetransmits();
  const machineBefore = coreTimes();
  const started = performance.now();
  let peakRss = rssBytes(pids);
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(pids))), RSS_SAMPLE_MS);
  let run: GeneratorRun;
  try {
    run = await runGenerators({ ...spec, target: system.url }, { ...generators, label: `${system.name} ${label}` });
  } finally {
    clearInterval(sampler);
  }
  const systemCpu = (cpuMs(pids) - cpuBefore) / (performance.now() - started);
  const clientCoreAfter = generators.core === undefined ? undefined : coreTimes(generators.core);
  const retransmitsAfter = tcpRetransmits();
  const machineAfter = coreTimes();
  const steal = machineBefore !== undefined && machineAfter !== undefined && machineAfter.total > machineBefore.total ? (machineAfter.steal - machineBefore.steal) / (machineAfter.total - machineBefore.total) : undefined;
  const retransmits = retransmitsBefore === undefined || retransmitsAfter === undefined ? undefined : retransmitsAfter - retransmitsBefore;
  let clientCoreBusy: number | undefined;
  if (clientCoreBefore !== undefined && clientCoreAfter !== undefined && clientCoreAfter.total > clientCoreBefore.total) {
    const busy = (clientCoreAfter.busy - clientCoreBefore.busy) / (clientCoreAfter.total - clientCoreBefore.total);
    clientCoreBusy = busy;
    // Each generator may be below its own limit while the core it shares is full.
    if (busy >= SATURATED_CORE) {
      const note = `core ${generators.core as number} (load generators and whatever shares it) ${pct(busy)} busy`;
      run = { ...run, generatorBottleneck: run.generatorBottleneck === undefined ? note : `${run.generatorBottleneck}; ${note}` };
    }
  }
  const countersAfter = system.adminUrl === undefined ? undefined : await routerCounters(system.adminUrl);
  const counted = countersBefore !== undefined && countersAfter !== undefined;
  const routerQueued = counted ? countersAfter.queued - countersBefore.queued : undefined;
  const scavenges = counted ? countersAfter.scavenges - countersBefore.scavenges : 0;
  const routerScavenges = counted ? { count: scavenges, meanMs: scavenges === 0 ? 0 : ((countersAfter.scavengeSeconds - countersBefore.scavengeSeconds) * 1000) / scavenges } : undefined;
  const measurement = { system: system.name, label, rps: (run.ok * 1000) / run.windowMs, e2e: Histogram.of([run.e2e]).percentiles(), ttft: Histogram.of([run.ttft]).percentiles(), itl: Histogram.of([run.itl]).percentiles(), systemCpu, peakRss, clientCoreBusy, tcpRetransmits: retransmits, steal, routerQueued, routerScavenges, run };
  const problems = (steal !== undefined && steal >= 0.01 ? `, CPU steal ${pct(steal)}` : '') + (routerQueued ? `, ${routerQueued} queued in the router` : '') + (routerScavenges?.count ? `, router scavenges ${routerScavenges.meanMs.toFixed(1)} ms mean` : '') + (run.shed > 0 ? `, ${run.shed} shed` : '') + (run.failed > 0 ? `, ${run.failed} FAILED (${Object.entries(run.failureKinds).map(([k, n]) => `${k} ${n}`).join(', ')})` : '');
  console.error(`${system.name} ${label}: ${measurement.rps.toFixed(0)} req/s, p50 ${measurement.e2e.p50.toFixed(2)} ms, p99 ${measurement.e2e.p99.toFixed(2)} ms, system CPU ${Math.round(systemCpu * 100)}%${problems}${run.generatorBottleneck === undefined ? '' : ` [generator limit: ${run.generatorBottleneck}]`}`);
  return measurement;
}

/**
 * Runs a load spec from several generator processes at once and merges what
 * they measured. One Node process saturates one core well below what a
 * router pinned to its own core can serve, so a benchmark that must not
 * report the generator's limit as the target's splits the load, and every
 * result says whether any generator ran out of CPU or fell behind its
 * schedule.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Histogram } from './histogram.ts';
import type { LoadProgress, LoadResult, LoadSpec } from './load-spec.ts';
import { mergeSeconds } from './per-second.ts';
import { ProgressLine } from './progress.ts';

const CHILD = fileURLToPath(new URL('./generator-process.ts', import.meta.url));

/** A generator used this much of a core: it was (close to) the bottleneck. */
const SATURATED_CPU_SHARE = 0.85;
/** Event-loop stalls this long in a generator inflate every latency it measures. */
const STALLED_LOOP_P99_MS = 25;
/** Open loop: sending this late means the offered rate was not what was asked for. */
const LATE_SEND_P99_MS = 10;

/** How to run the generators. */
export interface GeneratorOptions {
  /** Number of generator processes (≥ 1). */
  readonly processes: number;
  /** Pin generator processes to this CPU core with taskset. */
  readonly core?: number;
  /** Label for the live progress line. */
  readonly label: string;
  /** No live progress output (CI). */
  readonly quiet: boolean;
}

/** Per-process facts a reader needs to trust a result. */
export interface GeneratorHealth {
  readonly cpuShare: number;
  readonly loopDelayP99Ms: number;
  readonly sendLagP99Ms: number;
}

/** Merged results of all generator processes. */
export interface GeneratorRun extends LoadResult {
  readonly processes: readonly GeneratorHealth[];
  /** Why the generator itself may have limited this result, or undefined when it kept up. */
  readonly generatorBottleneck: string | undefined;
}

/** Splits `total` into `parts` integers that sum to it. */
function share(total: number, parts: number, index: number): number {
  return Math.floor(total / parts) + (index < total % parts ? 1 : 0);
}

/** The part of `spec` generator `index` of `parts` runs. */
export function splitSpec(spec: LoadSpec, parts: number, index: number): LoadSpec {
  const mode =
    spec.mode.kind === 'closed'
      ? { ...spec.mode, concurrency: share(spec.mode.concurrency, parts, index) }
      : {
          ...spec.mode,
          ratePerS: spec.mode.ratePerS / parts,
          ...(spec.mode.rampFromPerS === undefined ? {} : { rampFromPerS: spec.mode.rampFromPerS / parts }),
          maxConnections: Math.max(1, share(spec.mode.maxConnections, parts, index)),
        };
  // A shaped template's sessions are conversations one generator keeps, so they are shared out like the load; plain users stay shared by all.
  const request = spec.request.shape === undefined ? spec.request : { ...spec.request, users: share(spec.request.users, parts, index) };
  return {
    ...spec,
    request,
    mode,
    ...(spec.requests === undefined ? {} : { requests: share(spec.requests, parts, index) }),
    idPrefix: `${spec.idPrefix}-g${index}`,
    seed: spec.seed + index * 7919,
  };
}

/** Adds up the results of several generators. */
export function mergeResults(results: readonly LoadResult[]): GeneratorRun {
  const failureKinds: Record<string, number> = {};
  for (const r of results) for (const [kind, n] of Object.entries(r.failureKinds)) failureKinds[kind] = (failureKinds[kind] ?? 0) + n;
  const processes = results.map((r) => ({ cpuShare: r.cpuShare, loopDelayP99Ms: r.loopDelayP99Ms, sendLagP99Ms: r.sendLag.count === 0 ? 0 : Histogram.of([r.sendLag]).quantile(0.99) }));
  const reasons: string[] = [];
  for (const [i, p] of processes.entries()) {
    if (p.cpuShare >= SATURATED_CPU_SHARE) reasons.push(`generator ${i} used ${Math.round(p.cpuShare * 100)}% of a core`);
    if (p.loopDelayP99Ms >= STALLED_LOOP_P99_MS) reasons.push(`generator ${i} event loop stalled (p99 ${p.loopDelayP99Ms.toFixed(0)} ms)`);
    if (p.sendLagP99Ms >= LATE_SEND_P99_MS) reasons.push(`generator ${i} sent late (p99 ${p.sendLagP99Ms.toFixed(0)} ms behind schedule)`);
  }
  const sum = (pick: (r: LoadResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  return {
    measured: sum((r) => r.measured),
    ok: sum((r) => r.ok),
    shed: sum((r) => r.shed),
    failed: sum((r) => r.failed),
    failureKinds,
    failureExamples: results.flatMap((r) => r.failureExamples).slice(0, 10),
    e2e: Histogram.of(results.map((r) => r.e2e)).snapshot(),
    ttft: Histogram.of(results.map((r) => r.ttft)).snapshot(),
    itl: Histogram.of(results.map((r) => r.itl)).snapshot(),
    sendLag: Histogram.of(results.map((r) => r.sendLag)).snapshot(),
    timeline: Array.from({ length: Math.max(...results.map((r) => r.timeline.length)) }, (_, second) => sum((r) => r.timeline[second] ?? 0)),
    seconds: mergeSeconds(results.map((r) => r.seconds)),
    tokens: {
      output: Histogram.of(results.map((r) => r.tokens.output)).snapshot(),
      fromUsage: sum((r) => r.tokens.fromUsage),
      prompt: Histogram.of(results.map((r) => r.tokens.prompt)).snapshot(),
      askedOutput: sum((r) => r.tokens.askedOutput),
      askedPrompt: sum((r) => r.tokens.askedPrompt),
    },
    windowMs: Math.max(...results.map((r) => r.windowMs)),
    cpuShare: sum((r) => r.cpuShare),
    loopDelayP99Ms: Math.max(...results.map((r) => r.loopDelayP99Ms)),
    processes,
    generatorBottleneck: reasons.length === 0 ? undefined : reasons.join('; '),
  };
}

type ChildMessage = { progress: LoadProgress } | { result: LoadResult } | { error: string };

/** Runs one share of the load in a child process. */
function runChild(spec: LoadSpec, core: number | undefined, onProgress: (p: LoadProgress) => void): Promise<LoadResult> {
  const argv = [CHILD];
  // taskset execs node, which keeps the IPC descriptor and NODE_CHANNEL_FD.
  const child = core === undefined ? spawn(process.execPath, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : spawn('taskset', ['-c', String(core), process.execPath, ...argv], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let settled = false;
    child.on('message', (message: ChildMessage) => {
      if ('progress' in message) onProgress(message.progress);
      else if ('result' in message) {
        settled = true;
        resolve(message.result);
      } else {
        settled = true;
        reject(new Error(`load generator failed: ${message.error}`));
      }
    });
    child.once('exit', (code, signal) => {
      if (!settled) reject(new Error(`load generator exited with ${String(code ?? signal)} before reporting`));
    });
    child.send(spec);
  });
}

/** Runs `spec` split over `options.processes` generator processes and merges the results. */
export async function runGenerators(spec: LoadSpec, options: GeneratorOptions): Promise<GeneratorRun> {
  const progress = new ProgressLine(options.label, options.processes, options.quiet);
  try {
    const results = await Promise.all(Array.from({ length: options.processes }, (_, i) => runChild(splitSpec(spec, options.processes, i), options.core, (p) => progress.update(i, p))));
    return mergeResults(results);
  } finally {
    progress.close();
  }
}

/**
 * One policy's run of the routing-quality scenario: a fresh fleet, a fresh
 * router child process with that policy, the shared arrival schedule played
 * open-loop against it, and the records and queue samples that come out.
 */
import type { ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { cpuTimeMs } from '../../tests/kit/processes.ts';
import { spawnSwitchyard } from '../../tests/kit/router-process.ts';
import { closeSimulatedFleet, startSimulatedFleet, type EngineSpec } from './fleet.ts';
import type { Arrival } from './poisson.ts';
import { summarizeQuality, type QualitySummary, type RequestRecord } from './quality.ts';
import { QueueSampler, summarizeQueues, type QueueSummary } from './queue-sampler.ts';
import { streamChat } from './sse-client.ts';

/** How to run one policy. */
export interface PolicyRunSpec {
  /** Router `--routing-policy` value. */
  readonly policy: string;
  readonly fleet: readonly EngineSpec[];
  readonly model: string;
  readonly schedule: readonly Arrival[];
  /** Arrivals before this (ms after start) are warm-up: sent, not measured. */
  readonly warmupMs: number;
  /** Router `--scrape-interval-ms`. */
  readonly scrapeIntervalMs: number;
  /** Extra router flags (after the ones above, so they win). */
  readonly routerArgs: readonly string[];
  /** Queue sampling period (ms). */
  readonly samplePeriodMs: number;
  /** Schedule length (ms): the measured window is [warmupMs, lengthMs). */
  readonly lengthMs: number;
}

/** Everything one policy run produced. */
export interface PolicyResult extends QualitySummary {
  readonly policy: string;
  readonly queues: QueueSummary;
  /** Router CPU over the run, as a share of one core (0-1); undefined without /proc. */
  readonly routerCpu: number | undefined;
  /** p99 event-loop delay of this (client + engines) process during the run, beyond the sampling period (ms). */
  readonly clientLoopDelayP99Ms: number;
  /** The router's `switchyard_policy_decisions_total` by outcome at the end of the run (warm-up included). */
  readonly decisions: Record<string, number>;
  /** From the end of the schedule until the last response ended (ms): how long queues took to drain. */
  readonly drainMs: number;
  /** Capacity the router believed each engine had at the end (null: unknown), from /debug/endpoints. */
  readonly routerCapacity: (number | null)[];
}

/** The delay histogram records whole timer periods, so this is subtracted from what it reports. */
const LOOP_DELAY_RESOLUTION_MS = 10;

/** Runs `spec`; starts and stops everything it uses. */
export async function runPolicy(spec: PolicyRunSpec): Promise<PolicyResult> {
  const engines = await startSimulatedFleet(spec.model, spec.fleet);
  const router = await spawnSwitchyard(
    [
      'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0',
      ...engines.flatMap((engine) => ['--backend', engine.url]),
      '--routing-policy', spec.policy,
      '--scrape-interval-ms', String(spec.scrapeIntervalMs),
      '--log-level', 'info', // the "switchyard listening" line carries the ports
      '--lifecycle-pre-stop-delay-ms', '0',
      ...spec.routerArgs,
    ],
  ).catch(async (err: unknown) => {
    await closeSimulatedFleet(engines);
    throw err;
  });
  const log = tailOf(router.child);
  const base = `http://127.0.0.1:${router.ports['traffic'] as number}`;
  const admin = `http://127.0.0.1:${router.ports['admin'] as number}`;
  // No connection cap: an open-loop client that queues requests itself would hide the router's queueing.
  const pool = new Pool(base, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  let sampler: QueueSampler | undefined;
  try {
    await waitUntilRoutable(admin, engines.map((engine) => engine.url));
    const start = performance.now();
    const windowEnd = start + spec.lengthMs;
    sampler = new QueueSampler(engines, spec.samplePeriodMs, () => {
      const now = performance.now();
      return now >= start + spec.warmupMs && now <= windowEnd;
    });
    const cpuBefore = cpuTimeMs(router.child.pid);
    loopDelay.enable();
    const records = await play(spec, pool, start, (requestId) => engines.findIndex((engine) => engine.received(requestId) !== undefined));
    const ended = performance.now();
    loopDelay.disable();
    const cpuAfter = cpuTimeMs(router.child.pid);
    const samples = sampler.stop();
    const known = await debugEndpoints(admin);
    const decisions = await decisionCounts(admin);
    return {
      policy: spec.policy,
      ...summarizeQuality(records, engines.length),
      queues: summarizeQueues(samples, engines.length),
      routerCpu: cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / (ended - start),
      clientLoopDelayP99Ms: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_DELAY_RESOLUTION_MS),
      decisions,
      drainMs: ended - windowEnd,
      routerCapacity: engines.map((engine) => known.find((e) => e.url === engine.url)?.load.capacity ?? null),
    };
  } catch (err) {
    // The router is a separate process: without its last words a failure here is a bare ECONNREFUSED.
    throw new Error(`${spec.policy} run failed: ${(err as Error).message}\nrouter exit code: ${String(router.child.exitCode)}; router log tail:\n${log()}`, { cause: err });
  } finally {
    sampler?.stop(); // its interval would otherwise keep the process alive after a failure
    loopDelay.disable();
    await pool.close();
    await router.stop();
    await closeSimulatedFleet(engines);
  }
}

/** Sends every arrival at its scheduled time (never waiting for earlier ones) and resolves once all have ended. */
async function play(spec: PolicyRunSpec, pool: Pool, start: number, servedBy: (requestId: string) => number): Promise<RequestRecord[]> {
  const pending: Promise<RequestRecord>[] = [];
  for (const arrival of spec.schedule) {
    const due = start + arrival.atMs;
    const wait = due - performance.now();
    // setTimeout cannot wait less than ~1 ms: send what is due within that at once.
    if (wait >= 1) await sleep(wait);
    const requestId = `rq-${spec.policy}-${arrival.index}`;
    const sentAt = performance.now();
    pending.push(
      streamChat(pool, { model: spec.model, requestId, sessionKey: arrival.sessionKey, turn: arrival.turn }).then((outcome) => ({
        index: arrival.index,
        sessionKey: arrival.sessionKey,
        measured: arrival.atMs >= spec.warmupMs,
        // Measured from the scheduled arrival, so a late generator cannot hide latency (coordinated omission).
        ttftMs: outcome.firstDataAt === undefined ? undefined : outcome.firstDataAt - due,
        sendLagMs: sentAt - due,
        error: outcome.error,
        shed: outcome.shed,
        engine: servedBy(requestId),
      })),
    );
  }
  return Promise.all(pending);
}

/** Keeps the last few KiB a child writes to stdout and stderr; returns a reader. */
function tailOf(child: ChildProcess): () => string {
  let tail = '';
  const keep = (text: string) => {
    tail = (tail + text).slice(-4096);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => tail;
}

interface DebugEndpoint {
  readonly url: string;
  readonly routable: boolean;
  readonly load: { readonly capacity: number | null };
  readonly scrape: { readonly ageMs: number | null };
}

/** The router's /debug/endpoints, as far as the scenarios read it. */
export async function debugEndpoints(admin: string): Promise<DebugEndpoint[]> {
  return ((await (await fetch(`${admin}/debug/endpoints`)).json()) as { endpoints: DebugEndpoint[] }).endpoints;
}

/** Reads the router's decision counters from its Prometheus exposition. */
export async function decisionCounts(admin: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^switchyard_policy_decisions_total\{[^}]*outcome="([a-z_]+)"[^}]*\} (\S+)$/gm)) {
    const outcome = match[1] as string;
    counts[outcome] = (counts[outcome] ?? 0) + Number(match[2]);
  }
  return counts;
}

/**
 * Resolves once every engine is routable (its models probed) and scraped at
 * least once, so the first arrivals are not all sent to whichever engine the
 * model probe reached first.
 */
export async function waitUntilRoutable(admin: string, urls: readonly string[]): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const endpoints = await debugEndpoints(admin);
    const ready = urls.every((url) => endpoints.some((e) => e.url === url && e.routable && e.scrape.ageMs !== null));
    if (ready) return;
    await sleep(20);
  }
  throw new Error('the router never saw every engine routable and scraped');
}

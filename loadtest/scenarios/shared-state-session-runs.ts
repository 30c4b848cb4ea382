/**
 * The conversation runs: every request belongs to one of 400 conversations
 * (`x-session-id`), and the engines' own records say which engines each one
 * reached.
 *
 * - At 50% load, with one and three replicas, with and without Redis, a
 *   fifth engine joins halfway: stickiness overall, and what the join did
 *   to the conversations that already existed.
 * - At 85% load, three replicas, without Redis, with Redis, and with Redis
 *   killed, restarted, paused and resumed mid-run: which conversations
 *   changed engine against the moves the routers counted, the 429s, and how
 *   long the fleet took to agree again after each recovery.
 */
import type { LoadSpec, RequestTemplate } from '../bench/load-spec.ts';
import { playOutage, type OutageTimes } from './shared-state-outage.ts';
import { MODEL, USERS, type BusyRun, type Plan } from './shared-state-plan.ts';
import type { Rig } from './shared-state-rig.ts';
import { runOnce, type Bench, type RunResult } from './shared-state-run.ts';
import { joinEffect, snapshotSessions, stickiness, type JoinEffect, type SessionRecords, type Stickiness } from './shared-state-sessions.ts';
import { convergence, FleetWatch, type Convergence, type FleetSample } from './shared-state-watch.ts';

const CONVERSATIONS: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: 0, headers: {}, users: USERS, checkIds: true };

/** The open-loop conversation load at `ratePerS`. */
export function conversationSpec(plan: Plan, ratePerS: number, idPrefix: string): Omit<LoadSpec, 'target'> {
  return { request: CONVERSATIONS, mode: { kind: 'open', ratePerS, maxConnections: 1000 }, warmupMs: plan.warmupMs, durationMs: plan.sessionMs, idPrefix, seed: 11 };
}

const sleepUntil = (clock: () => number, ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - clock())));

/** What happened at the join. */
export interface Join {
  /** ms after load started. */
  readonly atMs: number;
  /** ms from listening until every replica listed it routable; undefined when one never did within the run. */
  readonly routableAfterMs: number | undefined;
  readonly before: SessionRecords;
}

/** A 50% run. */
export interface CalmRun {
  readonly run: RunResult<Join>;
  readonly stickiness: Stickiness;
  /** What the join did to conversations that existed before it. */
  readonly join: JoinEffect | undefined;
}

async function routableEverywhere(rig: Rig, url: string): Promise<boolean> {
  const lists = await Promise.all(
    rig.routers.map((router) =>
      fetch(`${router.adminUrl as string}/debug/endpoints`)
        .then((r) => r.json() as Promise<{ endpoints: { url: string; routable: boolean }[] }>)
        .then((doc) => doc.endpoints.some((e) => e.url === url && e.routable))
        .catch(() => false),
    ),
  );
  return lists.every(Boolean);
}

/** Joins the late engine halfway through the measured part and times until every replica routes to it. */
function joinHalfway(bench: Bench, plan: Plan) {
  return async (rig: Rig, clock: () => number): Promise<Join> => {
    const total = plan.warmupMs + plan.sessionMs;
    await sleepUntil(clock, plan.warmupMs + plan.sessionMs / 2);
    const before = snapshotSessions(bench.engines.map((e) => e.sessions));
    await bench.late.join();
    const atMs = clock();
    let routableAfterMs: number | undefined;
    while (clock() < total) {
      if (await routableEverywhere(rig, bench.late.url)) {
        routableAfterMs = clock() - atMs;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { atMs, routableAfterMs, before };
  };
}

/** The 50% runs: each replica count in the plan, without and with Redis. */
export async function calmRuns(bench: Bench, plan: Plan, ratePerS: number): Promise<CalmRun[]> {
  const out: CalmRun[] = [];
  for (const replicas of plan.stickinessReplicas) {
    for (const redis of [false, true]) {
      const run = await runOnce(bench, {
        label: `${ratePerS} req/s, ${replicas} replica${replicas === 1 ? '' : 's'}, ${redis ? 'Redis' : 'no Redis'}, +1 engine halfway`,
        replicas,
        redis,
        lateEngine: true,
        spec: conversationSpec(plan, ratePerS, `calm-${replicas}-${redis ? 'r' : 'n'}`),
        during: joinHalfway(bench, plan),
      });
      out.push({ run, stickiness: stickiness(run.sessions), join: run.during === undefined ? undefined : joinEffect(run.during.before, run.sessions, bench.engines.length) });
    }
  }
  return out;
}

/** The outage as it happened and the fleet's state through it. */
export interface Outage {
  readonly times: OutageTimes;
  readonly samples: FleetSample[];
  /** From the restarted Redis answering until every replica was up and agreed on the fleet, judged until the pause. */
  readonly afterRestart: Convergence;
  /** The same from SIGCONT, judged until the end of the run. */
  readonly afterResume: Convergence;
}

/** An 85% run. */
export interface BusyRunResult {
  readonly kind: BusyRun;
  readonly run: RunResult<Outage>;
  readonly stickiness: Stickiness;
}

function outageDuring(bench: Bench, plan: Plan) {
  return async (rig: Rig, clock: () => number): Promise<Outage> => {
    const total = plan.warmupMs + plan.sessionMs;
    // The watch starts with the load (a few ms later); its clock is the outage's, so both read the same times.
    const watch = new FleetWatch(rig.routers);
    let samples: FleetSample[];
    let times: OutageTimes;
    try {
      times = await playOutage(bench.redis, total, () => watch.now());
      await sleepUntil(clock, total);
    } finally {
      samples = await watch.stop();
    }
    return { times, samples, afterRestart: convergence(samples, times.restart, times.pause), afterResume: convergence(samples, times.resume, Number.POSITIVE_INFINITY) };
  };
}

/** The 85% runs the plan asks for, three replicas each. */
export async function busyRuns(bench: Bench, plan: Plan, ratePerS: number): Promise<BusyRunResult[]> {
  const out: BusyRunResult[] = [];
  for (const kind of plan.busyRuns) {
    const run = await runOnce(bench, {
      label: `${ratePerS} req/s, 3 replicas, ${kind === 'off' ? 'no Redis' : kind === 'redis' ? 'Redis' : 'Redis killed, restarted, paused'}`,
      replicas: 3,
      redis: kind !== 'off',
      lateEngine: false,
      spec: conversationSpec(plan, ratePerS, `busy-${kind}`),
      ...(kind === 'outage' ? { during: outageDuring(bench, plan) } : {}),
    });
    out.push({ kind, run, stickiness: stickiness(run.sessions) });
  }
  return out;
}

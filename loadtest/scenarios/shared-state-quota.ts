/**
 * Quota accuracy across replicas: one API key whose tenant may send 50
 * requests a second offers 100 a second through three replicas behind
 * nginx. With Redis the replicas enforce one fleet-wide limit (50 ± 5
 * admitted); with Redis gone after the fleet formed, each replica enforces
 * its share of the limit (at most 50 in all); without Redis at all the
 * figure is reported for contrast. Before load, one request without a key
 * and one with it show whether the routers enforce keys at all, so a run on
 * routers that ignore the keys file reads as such.
 */
import type { RequestTemplate } from '../bench/load-spec.ts';
import { admittedPerS } from './shared-state-figures.ts';
import { writeKeysFile } from './shared-state-keys.ts';
import { MODEL, QUOTA, type Plan, type QuotaMode } from './shared-state-plan.ts';
import type { Rig } from './shared-state-rig.ts';
import { runOnce, type Bench, type RunResult } from './shared-state-run.ts';

const TENANT = 'bench-tenant';
/** Replicas give up on Redis within a command timeout and the breaker; this is ample. */
const DEGRADES_WITHIN_MS = 5000;

/** Statuses of the two requests sent before load. */
export interface AuthProbe {
  readonly withoutKey: number;
  readonly withKey: number;
}

/** One quota run, or why it could not run. */
export interface QuotaRun {
  readonly mode: QuotaMode;
  readonly run: RunResult<undefined> | undefined;
  readonly auth: AuthProbe | undefined;
  /** Answered 200 per second over the measured window. */
  readonly admittedPerS: number;
  /** Replicas that reported the shared state down before load (degraded mode). */
  readonly degradedReplicas: number | undefined;
  /** Why the run did not happen (e.g. the routers refused the keys file). */
  readonly error: string | undefined;
}

async function probeAuth(rig: Rig, key: string): Promise<AuthProbe> {
  const send = (headers: Record<string, string>) =>
    fetch(`${rig.front.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }) }).then(
      async (r) => (await r.arrayBuffer(), r.status),
      () => 0,
    );
  return { withoutKey: await send({}), withKey: await send({ authorization: `Bearer ${key}` }) };
}

/** Kills Redis once the fleet formed and waits until every replica reports it down; returns how many did. */
async function degrade(bench: Bench, rig: Rig): Promise<number> {
  await bench.redis.kill();
  const deadline = performance.now() + DEGRADES_WITHIN_MS;
  for (;;) {
    const down = (await rig.views()).filter((v) => v.up === 0).length;
    if (down === rig.routers.length || performance.now() > deadline) return down;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The quota runs the plan asks for. Redis is running again when this returns. */
export async function quotaRuns(bench: Bench, plan: Plan): Promise<QuotaRun[]> {
  const keys = writeKeysFile(TENANT, QUOTA.limitPerS);
  const request: RequestTemplate = { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes: 0, headers: { authorization: `Bearer ${keys.key}` }, users: 0, checkIds: true };
  const out: QuotaRun[] = [];
  try {
    for (const mode of plan.quotaModes) {
      let auth: AuthProbe | undefined;
      let degradedReplicas: number | undefined;
      let killed = false;
      try {
        const run = await runOnce<undefined>(bench, {
          label: `${QUOTA.offeredPerS} req/s on one key limited to ${QUOTA.limitPerS}/s, 3 replicas, ${mode === 'shared' ? 'Redis' : mode === 'degraded' ? 'Redis down (degraded)' : 'no Redis'}`,
          replicas: 3,
          redis: mode !== 'off',
          lateEngine: false,
          args: ['--auth-api-keys-file', keys.path],
          spec: { request, mode: { kind: 'open', ratePerS: QUOTA.offeredPerS, maxConnections: 1000 }, warmupMs: plan.warmupMs, durationMs: plan.quotaMs, idPrefix: `quota-${mode}`, seed: 23 },
          beforeLoad: async (rig) => {
            auth = await probeAuth(rig, keys.key);
            if (mode !== 'degraded') return;
            killed = true;
            degradedReplicas = await degrade(bench, rig);
          },
        });
        out.push({ mode, run, auth, admittedPerS: admittedPerS(run.measurement.run.ok, run.measurement.run.windowMs), degradedReplicas, error: undefined });
      } catch (err) {
        out.push({ mode, run: undefined, auth, admittedPerS: Number.NaN, degradedReplicas, error: (err as Error).message.slice(0, 300) });
      } finally {
        if (killed) await bench.redis.restart();
      }
    }
  } finally {
    keys.remove();
  }
  return out;
}

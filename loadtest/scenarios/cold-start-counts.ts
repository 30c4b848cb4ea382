/**
 * What the routers counted and the engines saw in a cold-start run. The
 * routers' side is their admin `/metrics`: 429s by reason, session moves,
 * decisions, session lookups, and the Redis commands that got no answer. The
 * engines' side is where each session key's requests went: each simulator
 * records every request id it received with its `x-session-id`, and a
 * closed-loop client's request ids rise with its send order, so a key's
 * engines are known request by request. A move the routers did not count
 * shows as more engine changes than counted moves.
 *
 * The two session counters mean different things. With Redis a key has a
 * stored engine and `switchyard_session_moves_total{reason}` counts each
 * time a replica moved it (saturated, ejected, gone), so every change of
 * engine between a key's consecutive requests should be one counted move; a
 * lookup Redis did not answer in time goes by rendezvous hashing instead,
 * which no counter calls a move. Without Redis a key's engine is its
 * rendezvous-hash first choice, recomputed per request: a request sent
 * elsewhere is an `affinity_spill` decision and the next one goes home
 * again, so A → B → A is two changes and one spill; what the engines can
 * check there is the requests off the engine each key used most (a lower
 * bound of those off its home engine, each of which is a spill).
 */
import type { Bars } from './results.ts';
import { sumByLabel } from './shared-state-prom.ts';

/** Where one request with a session key was served: its key and the engine's index. */
export interface ServedRequest {
  readonly key: string;
  readonly engine: number;
}

/** What the engines' records say about one run's session keys. */
export interface EngineTrail {
  /** Session keys that reached an engine. */
  readonly keys: number;
  /** Requests with a key that reached an engine. */
  readonly requests: number;
  /** Consecutive requests of one key served by different engines. */
  readonly engineChanges: number;
  /** Requests not served by the engine their key used most. */
  readonly offMostUsed: number;
}

/** The engine trail of `served`, which lists each key's requests in the order the key sent them. */
export function engineTrail(served: readonly ServedRequest[]): EngineTrail {
  const keys = new Map<string, { last: number; counts: Map<number, number>; requests: number }>();
  let engineChanges = 0;
  for (const { key, engine } of served) {
    const entry = keys.get(key);
    if (entry === undefined) {
      keys.set(key, { last: engine, counts: new Map([[engine, 1]]), requests: 1 });
      continue;
    }
    if (entry.last !== engine) engineChanges++;
    entry.last = engine;
    entry.counts.set(engine, (entry.counts.get(engine) ?? 0) + 1);
    entry.requests++;
  }
  let requests = 0;
  let offMostUsed = 0;
  for (const entry of keys.values()) {
    requests += entry.requests;
    offMostUsed += entry.requests - Math.max(...entry.counts.values());
  }
  return { keys: keys.size, requests, engineChanges, offMostUsed };
}

/** What the routers counted, summed over replicas. */
export interface RouterCounts {
  /** `switchyard_shed_total` by reason. */
  readonly shed: Record<string, number>;
  /** `switchyard_session_moves_total` by reason (shared assignments: Redis). */
  readonly moves: Record<string, number>;
  /** `switchyard_policy_decisions_total` by outcome. */
  readonly decisions: Record<string, number>;
  /** `switchyard_session_lookups_total` by result (Redis). */
  readonly lookups: Record<string, number>;
  /** `switchyard_shared_state_failures_total` by kind: Redis commands that got no answer (Redis). */
  readonly redisFailures: Record<string, number>;
  /** `switchyard_shared_state_breaker_transitions_total` by the state entered (Redis). */
  readonly breaker: Record<string, number>;
}

/** Adds up the counters of `expositions` (one per replica). */
export function routerCounts(expositions: readonly string[]): RouterCounts {
  const add = (name: string, label: string) => {
    const out: Record<string, number> = {};
    for (const text of expositions) for (const [key, n] of Object.entries(sumByLabel(text, name, label))) if (n > 0) out[key] = (out[key] ?? 0) + n;
    return out;
  };
  return {
    shed: add('switchyard_shed_total', 'reason'),
    moves: add('switchyard_session_moves_total', 'reason'),
    decisions: add('switchyard_policy_decisions_total', 'outcome'),
    lookups: add('switchyard_session_lookups_total', 'result'),
    redisFailures: add('switchyard_shared_state_failures_total', 'kind'),
    breaker: add('switchyard_shared_state_breaker_transitions_total', 'to'),
  };
}

/** `k n, k n` for a table cell; `-` when empty. */
export function countsCell(counts: Readonly<Record<string, number>>): string {
  return (
    Object.entries(counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || '-'
  );
}

/** One run whose clients sent session keys, as the report needs it. */
export interface SessionRun {
  readonly label: string;
  readonly redis: boolean;
  readonly trail: EngineTrail;
  readonly counts: RouterCounts;
}

const total = (counts: Readonly<Record<string, number>>) => Object.values(counts).reduce((a, b) => a + b, 0);

/**
 * The bars of the session runs: with Redis, every engine change is a counted move, and every
 * move's reason is saturation (no engine fails or leaves during the burst, so an `ejected` or
 * `gone` move would be a wrong one); without Redis, where the counter has no reason, every request
 * off its key's engine is a counted spill.
 */
export function sessionBars(bars: Bars, runs: readonly SessionRun[]): void {
  for (const r of runs) {
    const moves = total(r.counts.moves);
    if (r.redis) {
      bars.check('performance', `${r.label}: every change of engine between a key's consecutive requests is a move the routers counted (switchyard_session_moves_total)`, r.trail.engineChanges <= moves, `${r.trail.engineChanges} engine changes seen by the engines, ${moves} moves counted`);
      bars.check('performance', `${r.label}: sessions moved only off saturated engines (no engine failed or left)`, moves === (r.counts.moves['saturated'] ?? 0), `moves by reason: ${countsCell(r.counts.moves)}`);
    } else {
      const spills = r.counts.decisions['affinity_spill'] ?? 0;
      bars.check('performance', `${r.label}: every request sent off its key's engine was counted (requests off the engine their key used most ≤ affinity_spill decisions)`, r.trail.offMostUsed <= spills, `${r.trail.offMostUsed} requests off their key's most-used engine, ${spills} spills counted`);
    }
  }
}

/** The session runs' table (Markdown lines). */
export function sessionTable(runs: readonly SessionRun[]): string[] {
  return [
    '| run | session keys | requests with a key served | moves counted (switchyard_session_moves_total) | engine changes seen by the engines | requests off their key\'s most-used engine | decisions (switchyard_policy_decisions_total) |',
    '|---|---|---|---|---|---|---|',
    ...runs.map((r) => `| ${r.label} | ${r.trail.keys} | ${r.trail.requests} | ${countsCell(r.counts.moves)} | ${r.trail.engineChanges} | ${r.trail.offMostUsed} | ${countsCell(r.counts.decisions)} |`),
  ];
}

/** One Redis run, as the report needs it. */
export interface RedisRun {
  readonly label: string;
  /** How long after the last replica started every one reported Redis up and the whole fleet; undefined: never. */
  readonly upInMs: number | undefined;
  readonly counts: RouterCounts;
}

/** The Redis runs' table (Markdown lines): what Redis did not answer during the burst, and what session lookups found. */
export function redisTable(runs: readonly RedisRun[]): string[] {
  return [
    '| run | Redis up before the burst, ms | commands unanswered (switchyard_shared_state_failures_total) | breaker opened | session lookups (switchyard_session_lookups_total) |',
    '|---|---|---|---|---|',
    ...runs.map((r) => `| ${r.label} | ${r.upInMs === undefined ? 'never' : r.upInMs.toFixed(0)} | ${countsCell(r.counts.redisFailures)} | ${r.counts.breaker['open'] ?? 0} | ${countsCell(r.counts.lookups)} |`),
  ];
}

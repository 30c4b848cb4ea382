/**
 * Decodes the fleet script's reply (see fleet-load.ts) and refuses anything
 * that is not what the script returns. The reply crosses a network from a
 * server the router does not control: a nil where a replica's counts belong
 * once threw inside the publish timer's promise and, with nothing to catch
 * it, took the process down within a second of connecting, on every replica
 * at once. So every element is checked for type and size here, and a reply
 * that fails any check is no answer at all (the caller falls back to local
 * counts, as when Redis is down), never half of one.
 */

/** Limits of a reply the router accepts. */
export interface FleetReplyLimits {
  /** Most live replicas (the reply holds three elements per replica). */
  readonly maxReplicas: number;
  /** Most engines, or models with queued requests, one replica may report. */
  readonly maxEnginesPerReplica: number;
  /** Most distinct engine ids in the whole reply (what routing keeps of it), and most distinct queued models. */
  readonly maxEngines: number;
  /** Longest replica or engine id (characters). */
  readonly maxIdLength: number;
  /** Largest in-flight count one replica may report for one engine. */
  readonly maxCount: number;
}

/** Generous for any real fleet; small enough that a hostile reply cannot make routing state large. */
export const FLEET_REPLY_LIMITS: FleetReplyLimits = { maxReplicas: 1_024, maxEnginesPerReplica: 4_096, maxEngines: 4_096, maxIdLength: 512, maxCount: 1_000_000 };

/** A decoded fleet read. */
export interface FleetRead {
  /** Live replica ids, in the reply's order. */
  readonly live: string[];
  /** Per engine id, the open requests of the replicas other than `self`. */
  readonly others: Map<string, number>;
  /** Per model, the replicas other than `self` with requests of it waiting in their router queues. */
  readonly queuedBy: Map<string, string[]>;
  /** Per engine id, the replicas other than `self` with requests open to it. */
  readonly activeAt: Map<string, string[]>;
}

/**
 * The fleet read in `reply`, or undefined when `reply` is not a list of
 * (replica id, [engine id, count, ...], [model, queued, ...]) triples
 * within `limits`. Counts come from HGETALL as decimal strings; numbers are
 * taken too (a proxy or a RESP3 server may send integers).
 */
export function decodeFleetReply(reply: unknown, limits: FleetReplyLimits = FLEET_REPLY_LIMITS): FleetRead | undefined {
  if (!Array.isArray(reply) || reply.length % 3 !== 0 || reply.length > 3 * limits.maxReplicas) return undefined;
  const live: string[] = [];
  const others = new Map<string, number>();
  const queuedBy = new Map<string, string[]>();
  const activeAt = new Map<string, string[]>();
  for (let i = 0; i < reply.length; i += 3) {
    const id: unknown = reply[i];
    if (!isId(id, limits)) return undefined;
    live.push(id);
    const counted = eachCount(reply[i + 1], limits, (engine, count) => {
      others.set(engine, (others.get(engine) ?? 0) + count);
      if (count > 0) listUnder(activeAt, engine, id);
      return others.size <= limits.maxEngines;
    });
    const queued = eachCount(reply[i + 2], limits, (model, count) => {
      if (count > 0) listUnder(queuedBy, model, id);
      return queuedBy.size <= limits.maxEngines;
    });
    if (!counted || !queued) return undefined;
  }
  return { live, others, queuedBy, activeAt };
}

function listUnder(lists: Map<string, string[]>, key: string, id: string): void {
  const list = lists.get(key);
  if (list === undefined) lists.set(key, [id]);
  else list.push(id);
}

/** Calls `take` for each (id, count) pair of a flat HGETALL list; false when the list is malformed or `take` refuses. */
function eachCount(list: unknown, limits: FleetReplyLimits, take: (id: string, count: number) => boolean): boolean {
  if (!Array.isArray(list) || list.length % 2 !== 0 || list.length > 2 * limits.maxEnginesPerReplica) return false;
  for (let j = 0; j < list.length; j += 2) {
    const id: unknown = list[j];
    const count = countOf(list[j + 1], limits);
    if (!isId(id, limits) || count === undefined || !take(id, count)) return false;
  }
  return true;
}

function isId(value: unknown, limits: FleetReplyLimits): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= limits.maxIdLength;
}

function countOf(value: unknown, limits: FleetReplyLimits): number | undefined {
  const count = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(count) && count >= 0 && count <= limits.maxCount ? count : undefined;
}

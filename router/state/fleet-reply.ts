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
  /** Most live replicas (the reply holds two elements per replica). */
  readonly maxReplicas: number;
  /** Most engines one replica may report. */
  readonly maxEnginesPerReplica: number;
  /** Most distinct engine ids in the whole reply (what routing keeps of it). */
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
}

/**
 * The fleet read in `reply`, or undefined when `reply` is not a list of
 * (replica id, [engine id, count, ...]) pairs within `limits`. Counts come
 * from HGETALL as decimal strings; numbers are taken too (a proxy or a RESP3
 * server may send integers).
 */
export function decodeFleetReply(reply: unknown, limits: FleetReplyLimits = FLEET_REPLY_LIMITS): FleetRead | undefined {
  if (!Array.isArray(reply) || reply.length % 2 !== 0 || reply.length > 2 * limits.maxReplicas) return undefined;
  const live: string[] = [];
  const others = new Map<string, number>();
  for (let i = 0; i < reply.length; i += 2) {
    const id: unknown = reply[i];
    const counts: unknown = reply[i + 1];
    if (!isId(id, limits) || !Array.isArray(counts) || counts.length % 2 !== 0 || counts.length > 2 * limits.maxEnginesPerReplica) return undefined;
    live.push(id);
    for (let j = 0; j < counts.length; j += 2) {
      const engine: unknown = counts[j];
      const count = countOf(counts[j + 1], limits);
      if (!isId(engine, limits) || count === undefined) return undefined;
      others.set(engine, (others.get(engine) ?? 0) + count);
      if (others.size > limits.maxEngines) return undefined;
    }
  }
  return { live, others };
}

function isId(value: unknown, limits: FleetReplyLimits): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= limits.maxIdLength;
}

function countOf(value: unknown, limits: FleetReplyLimits): number | undefined {
  const count = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(count) && count >= 0 && count <= limits.maxCount ? count : undefined;
}

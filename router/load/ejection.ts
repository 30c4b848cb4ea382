/**
 * Outlier ejection: an endpoint that fails several requests in a row is
 * taken out of routing for a while, longer each time it happens again, but
 * never so many endpoints that the rest would be overwhelmed. After the
 * interval it gets traffic again; one success readmits it fully, one more
 * failure ejects it again.
 *
 * Pure policy: the endpoint's health keeps the record and applies what these
 * functions decide.
 */
import type { UpstreamFailureKind } from './upstream-failure-kinds.ts';

/** Ejection tuning. */
export interface EjectionSettings {
  /** Consecutive failures that eject an endpoint. */
  readonly consecutiveFailures: number;
  /** First ejection length (ms); doubles with each repeat. */
  readonly baseMs: number;
  /** Longest ejection (ms); also the healthy time after which the doubling resets. */
  readonly maxMs: number;
  /** Most endpoints that may be ejected at once, as a share of all (0-1). */
  readonly maxShare: number;
}

/** An endpoint's failure record, as ejection reads it (endpoint-health.ts keeps one per endpoint). */
export interface EjectionRecord {
  /** Failures since the last success, the one being decided on included. */
  readonly consecutiveFailures: number;
  /** Epoch ms the current or last ejection ends (0: never ejected). */
  readonly ejectedUntil: number;
  /** Ejections so far. */
  readonly ejections: number;
  /** Epoch ms the last ejection began. */
  readonly lastEjectedAt: number;
}

/** The endpoint set, asked only when a failure could eject one more endpoint. */
export interface EjectionCensus {
  /** Endpoints in the set. */
  readonly size: number;
  /** Endpoints ejected at `now` (epoch ms). */
  ejectedCount(now: number): number;
}

/** Failure kinds that count towards ejection. A mid-stream cut is left out: the engine was up and working. */
const COUNTED: ReadonlySet<UpstreamFailureKind> = new Set(['connect', 'reset', 'timeout', 'status_5xx']);

/**
 * Decides whether a failure of `kind` at `now` ejects the endpoint whose
 * record (already counting this failure) is `record`. Returns the ordinal of
 * the ejection it starts (1 for the first, or the first after a long healthy
 * spell; the length follows from it via {@link ejectionLength}), or 0 when it
 * starts none.
 */
export function nextEjection(record: EjectionRecord, kind: UpstreamFailureKind, now: number, settings: EjectionSettings, census: EjectionCensus): number {
  if (!COUNTED.has(kind) || record.ejectedUntil > now) return 0;
  if (record.consecutiveFailures < settings.consecutiveFailures) return 0;
  if (census.ejectedCount(now) + 1 > Math.floor(settings.maxShare * census.size)) return 0;
  const healed = record.ejections > 0 && now - record.lastEjectedAt > settings.maxMs + ejectionLength(record.ejections, settings);
  return (healed ? 0 : record.ejections) + 1;
}

/** Length (ms) of the `ordinal`-th ejection (≥ 1): doubling from `baseMs`, capped at `maxMs`. */
export function ejectionLength(ordinal: number, settings: EjectionSettings): number {
  return Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, ordinal - 1));
}

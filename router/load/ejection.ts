/**
 * Outlier ejection: an endpoint that fails several requests in a row is
 * taken out of routing for a while, longer each time it happens again, but
 * never so many endpoints that the rest would be overwhelmed. After the
 * interval it gets traffic again; one success readmits it fully, one more
 * failure ejects it again.
 */
import type { EndpointState, UpstreamFailureKind } from './endpoint-state.ts';

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

/** Failure kinds that count towards ejection. A mid-stream cut is left out: the engine was up and working. */
const COUNTED: ReadonlySet<UpstreamFailureKind> = new Set(['connect', 'reset', 'timeout', 'status_5xx']);

/**
 * Applies a failed request to `state`. Returns true when it ejected the
 * endpoint. `ejectedNow` and `total` are the view's counts before this call.
 */
export function recordFailure(state: EndpointState, kind: UpstreamFailureKind, now: number, settings: EjectionSettings, ejectedNow: number, total: number): boolean {
  if (!COUNTED.has(kind) || state.ejectedUntil > now) return false;
  if (state.consecutiveFailures < settings.consecutiveFailures) return false;
  if (ejectedNow + 1 > Math.floor(settings.maxShare * total)) return false;
  if (state.ejections > 0 && now - state.lastEjectedAt > settings.maxMs + durationOf(state.ejections, settings)) state.ejections = 0;
  state.ejections++;
  state.lastEjectedAt = now;
  state.ejectedUntil = now + durationOf(state.ejections, settings);
  // Back in after the interval on probation: the next failure ejects again, a success clears it.
  state.consecutiveFailures = settings.consecutiveFailures - 1;
  return true;
}

function durationOf(ejections: number, settings: EjectionSettings): number {
  return Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, ejections - 1));
}

/**
 * Router-wide limits that protect the router itself, checked before a
 * request's body is read: open requests, open connections, event-loop lag.
 * Each priority may use a share of them (see PRIORITY_LIMITS), so low
 * priority is shed first.
 */
import { readFileSync } from 'node:fs';
import { PRIORITY_LIMITS, type Priority } from '../scheduling/priority.ts';

/** Router-wide limits. */
export interface PressureLimits {
  readonly maxInFlight: number;
  readonly maxConnections: number;
  /** Event-loop lag (ms) above which new work is shed. */
  readonly eventLoopLagMs: number;
}

/** The router's current state, read per request. */
export interface PressureGauges {
  readonly inFlight: number;
  readonly connections: number;
  /** Event-loop lag that lasted or keeps growing (ms; see event-loop-lag.ts), not the latest spike. */
  readonly lagMs: number;
}

/** Why a request was shed before routing. */
export type PressureReason = 'in_flight_cap' | 'connection_cap' | 'event_loop_lag';

/** The first limit `gauges` break for a request of `priority`, if any. */
export function pressureReason(limits: PressureLimits, gauges: PressureGauges, priority: Priority): PressureReason | undefined {
  const share = PRIORITY_LIMITS[priority];
  if (gauges.inFlight >= limits.maxInFlight * share.caps) return 'in_flight_cap';
  if (gauges.connections > limits.maxConnections * share.caps) return 'connection_cap';
  if (gauges.lagMs > limits.eventLoopLagMs * share.lag) return 'event_loop_lag';
  return undefined;
}

/**
 * Caps the connection and in-flight limits below the process's open-file
 * limit: every client connection may need an upstream one too, and running
 * out of descriptors (EMFILE) must never happen in place of a clean 429.
 * Returns the limits to use and the soft limit read (undefined off Linux).
 */
export function fitToFileLimit(limits: PressureLimits, readLimits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): { limits: PressureLimits; openFiles: number | undefined } {
  let openFiles: number | undefined;
  try {
    const line = readLimits()
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    if (soft !== undefined && soft !== 'unlimited') openFiles = Number(soft);
  } catch {
    return { limits, openFiles: undefined };
  }
  if (openFiles === undefined || !Number.isFinite(openFiles)) return { limits, openFiles: undefined };
  // Keep 64 descriptors for the process itself (listeners, logs, scrapes), half the rest per side.
  const perSide = Math.max(8, Math.floor((openFiles - 64) / 2));
  return {
    limits: { ...limits, maxConnections: Math.min(limits.maxConnections, perSide), maxInFlight: Math.min(limits.maxInFlight, perSide) },
    openFiles,
  };
}

/**
 * Router-wide limits that protect the router itself, checked before a
 * request's body is read: open requests, open connections, event-loop lag.
 * Each priority may use a share of them (see PRIORITY_LIMITS), so low
 * priority is shed first.
 */
import { readFileSync } from 'node:fs';
import type { PressureReason } from '../metrics/label-values.ts';
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

/** Why a request was shed before routing (its values: PRESSURE_REASONS, router/metrics/label-values.ts). */
export type { PressureReason };

/** The first limit `gauges` break for a request of `priority`, if any. */
export function pressureReason(limits: PressureLimits, gauges: PressureGauges, priority: Priority): PressureReason | undefined {
  const share = PRIORITY_LIMITS[priority];
  if (gauges.inFlight >= limits.maxInFlight * share.caps) return 'in_flight_cap';
  if (gauges.connections > limits.maxConnections * share.caps) return 'connection_cap';
  if (gauges.lagMs > limits.eventLoopLagMs * share.lag) return 'event_loop_lag';
  return undefined;
}

/** Options of {@link fitToFileLimit}. */
export interface FileLimitOptions {
  /** The admin port's connection cap (`adminMaxConnections`), reserved before the traffic sides split the rest; 0 by default. */
  readonly adminConnections?: number;
  /** Reads `/proc/self/limits` (injected by tests). */
  readonly readLimits?: () => string;
}

/** What {@link fitToFileLimit} returns. */
export interface FittedLimits {
  readonly limits: PressureLimits;
  /** The admin port's connection cap to use. */
  readonly adminConnections: number;
  /** The soft open-file limit read; undefined off Linux or when unlimited. */
  readonly openFiles: number | undefined;
}

/**
 * Caps the connection and in-flight limits below the process's open-file
 * limit: every client connection may need an upstream one too, and running
 * out of descriptors (EMFILE) must never happen in place of a clean 429.
 * The admin port shares the limit, so its connection cap is reserved first
 * (and fitted to at most an eighth of the budget): idle admin connections
 * can never take the traffic port's descriptors.
 */
export function fitToFileLimit(limits: PressureLimits, options: FileLimitOptions = {}): FittedLimits {
  const wantedAdmin = options.adminConnections ?? 0;
  const readLimits = options.readLimits ?? (() => readFileSync('/proc/self/limits', 'utf8'));
  let openFiles: number | undefined;
  try {
    const line = readLimits()
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    if (soft !== undefined && soft !== 'unlimited') openFiles = Number(soft);
  } catch {
    return { limits, adminConnections: wantedAdmin, openFiles: undefined };
  }
  if (openFiles === undefined || !Number.isFinite(openFiles)) return { limits, adminConnections: wantedAdmin, openFiles: undefined };
  // Keep 64 descriptors for the process itself (listeners, logs, scrapes), then the admin port's, half the rest per side.
  const budget = Math.max(0, openFiles - 64);
  const adminConnections = Math.min(wantedAdmin, Math.max(8, Math.floor(budget / 8)));
  const perSide = Math.max(8, Math.floor((budget - adminConnections) / 2));
  return {
    limits: { ...limits, maxConnections: Math.min(limits.maxConnections, perSide), maxInFlight: Math.min(limits.maxInFlight, perSide) },
    adminConnections,
    openFiles,
  };
}

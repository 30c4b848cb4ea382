/**
 * Turns the per-request records of one policy run into the routing-quality
 * figures: TTFT quantiles, errors, where requests went, and how often a
 * conversation came back to the engine that served its previous turn.
 */
import { summarize, type LatencySummary } from '../bench/stats.ts';

/** What the scenario recorded for one request; times in ms. */
export interface RequestRecord {
  /** Arrival index; records are compared in this order. */
  readonly index: number;
  readonly sessionKey: string | undefined;
  /** Arrived inside the measured window (not warm-up). */
  readonly measured: boolean;
  /** Scheduled arrival to first `data:` event; undefined when none arrived. */
  readonly ttftMs: number | undefined;
  /** Actual send time minus scheduled arrival (how far the generator fell behind). */
  readonly sendLagMs: number;
  readonly error: string | undefined;
  /** Shed by the router: 429 with Retry-After. */
  readonly shed: boolean;
  /** Index of the engine that received it, -1 when none did. */
  readonly engine: number;
}

/** Routing quality of one run (measured window only). */
export interface QualitySummary {
  readonly requests: number;
  /** Requests that failed other than by being shed: 5xx, resets, streams cut before `[DONE]`, a 429 without Retry-After. */
  readonly errors: number;
  /** Requests the router shed with 429 + Retry-After (admission found every engine saturated). */
  readonly shed: number;
  /** First few error descriptions. */
  readonly errorExamples: string[];
  /** Over requests that succeeded (a shed or failed request has no first token). */
  readonly ttftMs: LatencySummary;
  readonly sendLagMs: LatencySummary;
  /** Share of measured requests each engine received (0-1), in engine order. */
  readonly servedShare: number[];
  /** Keyed requests whose key had been served before (the denominator of the hit ratio). */
  readonly sessionRepeats: number;
  /** Of those, how many went to the engine that served the key's previous request. */
  readonly sessionHits: number;
  /** sessionHits / sessionRepeats; NaN with no repeats. */
  readonly sessionHitRatio: number;
}

/**
 * Summarizes `records` (any order) for a fleet of `engines`. Warm-up
 * requests are not counted, but they do count as a key's "previous request",
 * so the first measured turn of a warmed-up conversation can be a hit.
 */
export function summarizeQuality(records: readonly RequestRecord[], engines: number): QualitySummary {
  const ordered = [...records].sort((a, b) => a.index - b.index);
  const measured = ordered.filter((r) => r.measured);
  // A 429 with Retry-After is admission keeping its contract, not a broken request: counted apart so the two are never confused.
  const shed = measured.filter((r) => r.shed);
  const failed = measured.filter((r) => r.error !== undefined && !r.shed);
  const served: number[] = Array.from({ length: engines }, () => 0);
  for (const r of measured) if (r.engine >= 0) served[r.engine] = (served[r.engine] as number) + 1;

  const lastEngine = new Map<string, number>();
  let repeats = 0;
  let hits = 0;
  for (const r of ordered) {
    // A request no engine saw says nothing about affinity either way.
    if (r.sessionKey === undefined || r.engine < 0) continue;
    const previous = lastEngine.get(r.sessionKey);
    if (previous !== undefined && r.measured) {
      repeats++;
      if (previous === r.engine) hits++;
    }
    lastEngine.set(r.sessionKey, r.engine);
  }
  return {
    requests: measured.length,
    errors: failed.length,
    shed: shed.length,
    errorExamples: [...new Set(failed.map((r) => r.error as string))].slice(0, 5),
    ttftMs: summarize(measured.filter((r) => r.error === undefined && r.ttftMs !== undefined).map((r) => r.ttftMs as number)),
    sendLagMs: summarize(measured.map((r) => r.sendLagMs)),
    servedShare: served.map((n) => (measured.length === 0 ? 0 : n / measured.length)),
    sessionRepeats: repeats,
    sessionHits: hits,
    sessionHitRatio: repeats === 0 ? Number.NaN : hits / repeats,
  };
}

/**
 * Least-load's capacity on a workload, the 100% the benchmark's loads are
 * shares of. With a prefix cache, capacity depends on how much of each
 * prompt is already cached, which depends on routing and on how many
 * conversations are alive at once (think time), so it is neither a constant
 * of the fleet nor well measured in a closed loop without think time (where
 * least-load hit twice as often as in the real run). Instead: a probe run of
 * least-load in the scenario's own open loop, at 80% of the no-hit capacity,
 * measures the uncached prompt tokens per request from the engines'
 * counters; capacity is then the fleet's bound for that prefill work.
 */
import { FLEET } from './prefix-fleet.ts';
import { runRow } from './prefix-runner.ts';
import { warmupMsFor, type Workload } from './prefix-workloads.ts';

/** The probe's load, as a share of the no-hit capacity (a lower bound of least-load's): busy enough to show the cache pressure, short of overload. */
const PROBE_LOAD = 0.8;

/** A workload's capacity and how it was found. */
export interface Capacity {
  /** Requests per second least-load sustains. */
  readonly perS: number;
  /** `probed`: from a least-load probe's uncached tokens; `derived`: assuming no cache hits (a lower bound). */
  readonly how: 'probed' | 'derived';
  /** Prompt tokens per request (the simulator's pseudo-tokens). */
  readonly promptTokens: number;
  /** Of those, left to prefill per request under least-load. */
  readonly uncachedTokens: number;
  /** The probe's token-weighted hit ratio (NaN when derived). */
  readonly hitRatio: number;
}

/**
 * Requests per second the fleet completes when every request leaves
 * `uncachedTokens` to prefill: per engine the smaller of the slot bound
 * (slots ÷ time a request holds a slot: prefill, the fixed first-token time,
 * and one event per output token plus the final one) and the prefill bound
 * (prefill rate ÷ uncached tokens, prefill being one FIFO lane per engine).
 */
export function fleetCapacity(uncachedTokens: number): number {
  const uncached = Math.max(1, uncachedTokens);
  const holdS = uncached / FLEET.prefillTps + (FLEET.ttftMs + FLEET.itlMs * (FLEET.outputTokens + 1)) / 1000;
  return FLEET.engines * Math.min(FLEET.slots / holdS, FLEET.prefillTps / uncached);
}

/** Capacity if nothing were ever cached: a lower bound on least-load's, without running anything (smoke runs). */
export function derivedCapacity(w: Workload): Capacity {
  return { perS: fleetCapacity(w.meanPromptTokens), how: 'derived', promptTokens: w.meanPromptTokens, uncachedTokens: w.meanPromptTokens, hitRatio: Number.NaN };
}

/** Probes least-load on `w` (one router, open loop, no shedding) and derives its capacity from the uncached tokens it left. */
export async function probedCapacity(w: Workload, timing: { readonly warmupMs: number; readonly durationMs: number; readonly drainMs: number }, seed: number): Promise<Capacity> {
  const ratePerS = PROBE_LOAD * derivedCapacity(w).perS;
  const row = await runRow({
    workload: w,
    router: 'least-load',
    replicas: 1,
    conversationsPerS: ratePerS / w.meanTurns,
    shedding: false,
    warmupMs: warmupMsFor(w, timing.warmupMs, ratePerS),
    durationMs: timing.durationMs,
    drainMs: timing.drainMs,
    seed: seed + 7_919,
    id: `probe-${w.name}`,
  });
  if (row.unavailable !== undefined) throw new Error(`least-load probe on ${w.name} could not run: ${row.unavailable}`);
  if (row.engineRequests === 0 || row.window.failed > 0) throw new Error(`least-load probe on ${w.name}: ${row.engineRequests} requests reached the engines, ${row.window.failed} failed`);
  const uncachedTokens = (row.queriedTokens - row.hitTokens) / row.engineRequests;
  return { perS: fleetCapacity(uncachedTokens), how: 'probed', promptTokens: row.queriedTokens / row.engineRequests, uncachedTokens, hitRatio: row.hitRatio };
}

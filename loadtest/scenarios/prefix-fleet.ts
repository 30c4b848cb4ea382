/**
 * The simulated fleet of the prefix-affinity benchmark: eight in-process
 * engine simulators with the KV-block prefix cache and prefill model on.
 */
import type { SimKnobs } from '../sim/knobs.ts';
import { EngineSimulator } from '../sim/server.ts';

/** The model every engine serves. */
export const MODEL = 'prefix-bench';

/**
 * The simulated fleet, fixed by the benchmark's issue so results compare
 * across runs: 8 engines × 24 batch slots, each with a 384k-token LRU prefix
 * cache (24,000 blocks of 16 tokens) and prefill at 12k prompt tokens per
 * second, the toy model of the design note (shared/research/prefix-affinity.md §4).
 */
export const FLEET = {
  engines: 8,
  slots: 24,
  kvBlocks: 24_000,
  blockTokens: 16,
  prefillTps: 12_000,
  /** Fixed part of the time to first token (ms), on top of the prefill of the uncached prompt. */
  ttftMs: 10,
  /**
   * Output: 16 tokens 60 ms apart, about 1 s of decode. Long enough that the
   * batch slots matter (C is slot-bound), few enough SSE events per second
   * that one Node process can host 8 engines and the client on a shared core.
   */
  itlMs: 60,
  outputTokens: 16,
} as const;

/** The fleet's engines, listening; closed by the caller with {@link closePrefixEngines}. */
export async function startPrefixEngines(seed: number): Promise<EngineSimulator[]> {
  const knobs: Partial<SimKnobs> = {
    maxSeqs: FLEET.slots,
    kvBlocks: FLEET.kvBlocks,
    blockTokens: FLEET.blockTokens,
    prefillTps: FLEET.prefillTps,
    ttftMs: FLEET.ttftMs,
    itlMs: FLEET.itlMs,
    outputTokens: FLEET.outputTokens,
  };
  const engines = Array.from({ length: FLEET.engines }, (_, i) => new EngineSimulator({ model: MODEL, seed: seed * 31 + i + 1, knobs }));
  await Promise.all(engines.map((engine) => engine.listen()));
  return engines;
}

/** Closes every engine. */
export async function closePrefixEngines(engines: readonly EngineSimulator[]): Promise<void> {
  await Promise.all(engines.map((engine) => engine.close()));
}


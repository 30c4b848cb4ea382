/**
 * The heterogeneous engine fleet of the routing-quality scenario: four
 * in-process simulators of different sizes and speeds, and what their
 * capacity is (nominal from the knobs, and measured, since every simulated
 * token is a timer that fires a little late).
 */
import { Pool } from 'undici';
import type { SimKnobs } from '../sim/knobs.ts';
import { EngineSimulator } from '../sim/server.ts';
import { streamChat } from './sse-client.ts';

/** One engine of the fleet; times in ms. */
export interface EngineSpec {
  /** Short label used in reports. */
  readonly name: string;
  /** Batch slots (vLLM max-num-seqs). */
  readonly maxSeqs: number;
  readonly ttftMs: number;
  readonly itlMs: number;
  readonly outputTokens: number;
  /** LoRA adapter slots (vLLM max_loras); absent or 0: LoRA off. */
  readonly loraSlots?: number;
  /** Time to swap an adapter into a slot (ms); the simulator's default (200) when absent. */
  readonly loraLoadMs?: number;
  /** Adapter names the engine serves next to the base model (used when loraSlots > 0). */
  readonly loraAdapters?: readonly string[];
}

/**
 * Two big fast engines, a medium one and a small slow one, as in a fleet
 * that mixes GPU generations: slots 8/8/4/2, and the smaller ones also
 * slower per token, so a policy that ignores load sends the small engines
 * far more than they can serve.
 */
export const FLEET: readonly EngineSpec[] = [
  { name: 'A', maxSeqs: 8, ttftMs: 30, itlMs: 5, outputTokens: 32 },
  { name: 'B', maxSeqs: 8, ttftMs: 30, itlMs: 5, outputTokens: 32 },
  { name: 'C', maxSeqs: 4, ttftMs: 45, itlMs: 8, outputTokens: 32 },
  { name: 'D', maxSeqs: 2, ttftMs: 60, itlMs: 10, outputTokens: 32 },
];

/**
 * Service time of one streamed request on an idle engine (ms): the first
 * event after `ttftMs`, then `outputTokens` content events and a final stop
 * event, each `itlMs` apart (see the simulator's chatEvents).
 */
export function nominalServiceMs(spec: EngineSpec): number {
  return spec.ttftMs + spec.itlMs * (spec.outputTokens + 1);
}

/** Requests per second the fleet completes when every slot is busy: Σ maxSeqs / service time. */
export function fleetCapacityPerS(specs: readonly EngineSpec[], serviceMs: readonly number[]): number {
  return specs.reduce((sum, spec, i) => sum + (spec.maxSeqs * 1000) / (serviceMs[i] as number), 0);
}

/** Started simulators, in {@link FLEET} order. The caller closes them with {@link closeSimulatedFleet}. */
export async function startSimulatedFleet(model: string, specs: readonly EngineSpec[] = FLEET): Promise<EngineSimulator[]> {
  const engines = specs.map(
    (spec, i) => new EngineSimulator({ model, seed: i + 1, knobs: { maxSeqs: spec.maxSeqs, ttftMs: spec.ttftMs, itlMs: spec.itlMs, outputTokens: spec.outputTokens, ...loraKnobs(spec) } }),
  );
  await Promise.all(engines.map((engine) => engine.listen()));
  return engines;
}

/** The spec's LoRA settings as simulator knobs; only those it sets, so the simulator's defaults fill the rest. */
function loraKnobs(spec: EngineSpec): Partial<SimKnobs> {
  const knobs: Partial<SimKnobs> = {};
  if (spec.loraSlots !== undefined) knobs.loraSlots = spec.loraSlots;
  if (spec.loraLoadMs !== undefined) knobs.loraLoadMs = spec.loraLoadMs;
  if (spec.loraAdapters !== undefined) knobs.loraAdapters = spec.loraAdapters.join(',');
  return knobs;
}

/** Closes every simulator (destroying open connections). */
export async function closeSimulatedFleet(engines: readonly EngineSimulator[]): Promise<void> {
  await Promise.all(engines.map((engine) => engine.close()));
}

/**
 * Measures each engine's real service time: the median of `samples`
 * sequential streams sent straight to it (no router). Timer overshoot makes
 * this longer than {@link nominalServiceMs}, and the load rate must be set
 * against what the engines really do.
 */
export async function measureServiceMs(engines: readonly EngineSimulator[], model: string, samples = 5): Promise<number[]> {
  const out: number[] = [];
  for (const engine of engines) {
    const pool = new Pool(engine.url, { connections: 1 });
    const times: number[] = [];
    try {
      for (let i = 0; i < samples; i++) {
        const sent = performance.now();
        const outcome = await streamChat(pool, { model, requestId: `calibrate-${i}`, sessionKey: undefined, turn: 1 });
        if (outcome.error !== undefined) throw new Error(`calibration request to ${engine.url} failed: ${outcome.error}`);
        times.push(outcome.endedAt - sent);
      }
    } finally {
      await pool.close();
    }
    times.sort((a, b) => a - b);
    out.push(times[Math.floor(times.length / 2)] as number);
  }
  return out;
}

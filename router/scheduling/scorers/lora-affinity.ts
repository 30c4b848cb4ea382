/**
 * Scorer: LoRA adapter affinity. A request for an adapter goes first to an
 * engine already running that adapter (no swap), then to one with a free
 * adapter slot (a load without evicting anyone), then to the rest, and last
 * to engines whose adapter queue shows swap pressure (requests waiting for an
 * adapter that is not running: they wait for a slot to turn over, and so
 * would this one). Within a tier the adapter's rendezvous order decides, so
 * every replica sends an adapter to the same engines and a hot adapter stays
 * on one until the load bound spills it to the next in its order: it spreads
 * to a second engine before it queues. Applies only to requests whose model
 * an engine lists as an adapter (`RequestFacts.loraBaseModel`).
 *
 * The state comes from the engines' `vllm:lora_requests_info` gauge
 * (router/load/extractors/lora-requests-info.ts), a scrape old, and from the
 * adapters this replica sent each engine since that scrape: a burst of
 * adapters between two scrapes does not pile onto an engine whose slots
 * the gauge still shows free.
 */
import { z } from 'zod';
import { hasSwapPressure, LORA_REQUESTS_INFO, type LoraRequestsInfo } from '../../load/extractors/lora-requests-info.ts';
import { hashString, mix32 } from '../../load/hash.ts';
import type { Candidate, RequestFacts } from '../candidate.ts';
import { BALANCE_FLOOR } from '../load-bound.ts';
import type { OrderingScorer, PickContext } from '../pick.ts';
import type { AffinityPlugin } from '../plugin.ts';
import { ensureUint32, topKInto } from '../select.ts';

/** How well an engine can take a request for one adapter; higher is better. */
export const LoraTier = {
  /** Its adapter queue shows requests waiting for an adapter it is not running. */
  swapPressure: 0,
  /** No free adapter slot (or no LoRA state): the adapter would evict an idle one, if any. */
  other: 1,
  /** Fewer adapters in use than `max_lora`: the adapter loads without evicting a busy one. */
  freeSlot: 2,
  /** The adapter is running there: no swap at all. */
  running: 3,
} as const;

/**
 * One candidate's {@link LoraTier} for `adapter`, from its last scraped LoRA
 * state and the adapters this replica sent it since (none: `other`).
 */
export function loraTier(info: LoraRequestsInfo | undefined, adapter: string): number {
  if (info === undefined || info.maxLora <= 0) return LoraTier.other;
  const sent = info.sentSinceScrape;
  if (info.running.includes(adapter) || sent.has(adapter)) return LoraTier.running;
  if (hasSwapPressure(info)) return LoraTier.swapPressure;
  let inUse = info.running.length;
  for (const other of sent) if (!info.running.includes(other)) inUse++;
  return inUse < info.maxLora ? LoraTier.freeSlot : LoraTier.other;
}

export class LoraAffinityScorer implements OrderingScorer {
  readonly name = 'lora';
  // A request for a base model is no LoRA decision: the walks before or after this one name its outcome.
  readonly outcomes = { hit: 'lora_hit', spill: 'lora_spill', declined: undefined } as const;
  #tier = new Uint32Array(0);
  #weight = new Uint32Array(0);

  applies(facts: RequestFacts): boolean {
    return facts.loraBaseModel !== undefined;
  }

  order<T extends Candidate>(context: PickContext<T>, max: number, order: Uint32Array, credit: Float64Array): number {
    const { candidates, pool, n } = context;
    const adapter = context.facts.model;
    const key = hashString(adapter);
    const tier = (this.#tier = ensureUint32(this.#tier, n));
    const weight = (this.#weight = ensureUint32(this.#weight, n));
    for (let i = 0; i < n; i++) {
      const candidate = candidates[pool[i] as number] as T;
      tier[i] = loraTier(candidate.attributes.get(LORA_REQUESTS_INFO), adapter);
      weight[i] = mix32(key, candidate.idHash);
    }
    const count = topKInto(order, n, max, (i, j) => {
      if (tier[i] !== tier[j]) return (tier[i] as number) > (tier[j] as number);
      if (weight[i] !== weight[j]) return (weight[i] as number) > (weight[j] as number);
      return (candidates[pool[i] as number] as T).id < (candidates[pool[j] as number] as T).id;
    });
    // Credit: the engines running the adapter hold it loaded; leaving them costs a swap elsewhere.
    for (let p = 0; p < count; p++) credit[p] = tier[order[p] as number] === LoraTier.running ? 1 : 0;
    return count;
  }
}

const loraParameters = z.strictObject({
  epsilon: z.number().min(0).optional().describe('Load bound headroom over the mean load score (default: routing.balanceEpsilon).'),
  kappa: z.number().min(0).default(1).describe('Extra headroom for an engine that runs the adapter (a move costs a swap there).'),
});

/** `lora`: a walk of the adapter's order (running, free slot, rest, swap pressure), under the load bound. */
export const loraAffinityPlugin: AffinityPlugin<z.output<typeof loraParameters>> = {
  name: 'lora',
  description:
    "Requests for a LoRA adapter: engines running it first, then engines with a free adapter slot, then the rest, engines whose adapter queue shows swap pressure last; within each, the adapter's rendezvous order, so replicas agree and a hot adapter spreads to a second engine at the load bound.",
  parameters: loraParameters,
  create: (parameters, defaults) => ({
    scorer: new LoraAffinityScorer(),
    bound: { epsilon: parameters.epsilon ?? defaults.balanceEpsilon, kappa: parameters.kappa, floor: BALANCE_FLOOR, creditFloorOnly: true },
  }),
};

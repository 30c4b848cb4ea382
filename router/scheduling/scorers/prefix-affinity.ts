/**
 * Scorer: prefix-cache affinity for requests without a session key, by
 * two-level rendezvous hashing (docs/load-and-routing.md, "Prefix affinity").
 *
 * SDK clients resend a conversation's whole history every turn, so the
 * prompt itself names its conversation (`conversation`: the hash through the
 * first user message) and how much of it the previous turn's engine holds
 * (`historyTokens`). Requests that share a long opening (one system prompt,
 * one document) form a group (`group`: the hash of its first 8 KiB).
 *
 * The order: engines ranked by rendezvous weight for the group, cut into
 * tiers of k = clamp(⌈β·N·share⌉, 1, N) engines, each tier reordered by
 * rendezvous weight for the conversation. A rare group lives on one engine;
 * a group that is a large share of the traffic (a system prompt everyone
 * sends) spreads over enough engines to carry its share, and each of its
 * conversations still has one home. The home engine gets credit for the
 * history it holds, the rest of the first tier for the group's shared
 * prefix: the load bound lets a candidate with credit run hotter. A rare
 * group follows the engine its last request went to (the group table
 * remembers it), where a first sighting placed by load or a spill left its
 * cache. A rare group a replica has not placed is presumed at its home,
 * where every replica sends a first sighting first. A first sighting goes
 * home when its prompt opens with a template (a document, instructions)
 * or the model's traffic shows reuse, else by load.
 *
 * No tokenizer, no per-engine index, nothing to purge when an engine
 * restarts (its conversations miss once each), and every replica computes
 * the same order from the same request, but for the placement a rare group
 * follows, which is each replica's own (its first sighting may go by load),
 * or with Redis the fleet's (router/request/prefix-placement-hook.ts).
 */
import { z } from 'zod';
import { mix32 } from '../../load/hash.ts';
import type { Candidate, PrefixFacts, RequestFacts } from '../candidate.ts';
import { BLOCK_BYTES, BYTES_PER_TOKEN, GROUP_BYTES, type PrefixKeys } from '../prefix-keys.ts';
import { BALANCE_FLOOR } from '../load-bound.ts';
import type { OrderingScorer, PickContext } from '../pick.ts';
import type { AffinityPlugin } from '../plugin.ts';
import { ensureFloat64, ensureUint32, topKInto } from '../select.ts';

/** Settings of the prefix-affinity order. */
export interface PrefixAffinitySettings {
  /** Engines per group per unit of its traffic share × fleet size (β ≥ 1: room to spare). */
  readonly spread: number;
  /** Cached tokens at which a candidate's credit reaches 1. */
  readonly fullCreditTokens: number;
  /** Below this share of reusable prompt tokens (0-1) the traffic has no reuse, and the scorer declines prompts of unknown groups without history. */
  readonly minReuse: number;
}

/** Defaults from the design research (../shared/research/prefix-affinity.md). */
export const PREFIX_AFFINITY_DEFAULTS: PrefixAffinitySettings = { spread: 2, fullCreditTokens: 8_192, minReuse: 0.1 };

/** Largest first tier ranked by partial selection; beyond it a full sort is cheaper. */
const SELECT_LIMIT = 64;

export class PrefixAffinityScorer implements OrderingScorer {
  readonly name = 'prefix';
  readonly outcomes = { hit: 'prefix_hit', spill: 'prefix_spill', declined: 'prefix_fallback' } as const;
  readonly #settings: PrefixAffinitySettings;
  // Scratch reused across decisions.
  #groupWeight = new Uint32Array(0);
  #conversationWeight = new Uint32Array(0);
  #byGroup = new Uint32Array(0);
  #sortKeys = new Float64Array(0);

  constructor(settings: PrefixAffinitySettings = PREFIX_AFFINITY_DEFAULTS) {
    this.#settings = settings;
  }

  /**
   * Applies to a prompt whose group the table knows, that carries history,
   * or whose group was placed (by another replica, through Redis): an engine
   * may hold something for it. A prompt with none of these (a new
   * conversation, a new document) is placed at home when its group opens
   * with a template (see {@link opensWithTemplate}), or while the model's
   * traffic shows reuse; on traffic without reuse, homes would only cost
   * balance.
   */
  applies(facts: RequestFacts): boolean {
    const prefix = facts.prefix;
    return prefix !== undefined && (this.#appliesUnplaced(prefix) || prefix.placedOn !== undefined);
  }

  #appliesUnplaced(prefix: PrefixFacts): boolean {
    return prefix.share > 0 || prefix.keys.historyTokens > 0 || opensWithTemplate(prefix) || prefix.reuse >= this.#settings.minReuse;
  }

  order<T extends Candidate>(context: PickContext<T>, max: number, order: Uint32Array, credit: Float64Array): number {
    const { candidates, pool, n } = context;
    const prefix = context.facts.prefix;
    if (prefix === undefined || n === 0) return 0;
    const tier = Math.min(n, Math.max(1, Math.ceil(this.#settings.spread * n * prefix.share)));
    // A group every engine serves, and no history: every engine holds what this prompt can reuse
    // (or none does), so no order gains anything, and one order for every such request (an
    // identical prompt sent many times) filled the first engines to the bound and left the last
    // unused. Least load places it; its conversation's later turns, which have history, go home.
    if (tier === n && prefix.keys.historyTokens === 0) return 0;
    // A rare group lives on one engine: the one its last request went to, which holds its cache,
    // wherever that was placed (a first sighting by load, a spill); its home when it went nowhere else.
    const placed = tier === 1 ? placedPosition(context, prefix.placedOn) : -1;
    // Applied only for its placement (another replica's, through Redis), which is no candidate here:
    // nothing is known to be cached anywhere, so it goes by load like any new prompt of its traffic.
    if (placed < 0 && !this.#appliesUnplaced(prefix)) return 0;
    const groupWeight = (this.#groupWeight = ensureUint32(this.#groupWeight, n));
    const conversationWeight = (this.#conversationWeight = ensureUint32(this.#conversationWeight, n));
    for (let i = 0; i < n; i++) {
      const idHash = (candidates[pool[i] as number] as T).idHash;
      groupWeight[i] = mix32(prefix.keys.group, idHash);
      conversationWeight[i] = mix32(prefix.keys.conversation, idHash);
    }
    const wanted = Math.min(n, max);
    // The engines of the tiers that hold the first `wanted` places, in group order.
    const ranked = Math.min(n, tier * Math.ceil(wanted / tier));
    const byGroup = this.#rankByGroup(n, ranked, groupWeight);
    const count = placed >= 0 ? followPlacement(placed, byGroup, ranked, wanted, order) : tierOrder(tier, byGroup, ranked, wanted, conversationWeight, order);
    // The group's shared prefix is credit only while its tier is a real subset: when every engine
    // is in the first tier, every engine holds it and none gains by keeping the request.
    const full = this.#settings.fullCreditTokens;
    const tierCredit = tier < n ? Math.min(1, prefix.sharedPrefixTokens / full) : 0;
    // A rare group's engine holds at least the span its hash covers (its first 8 KiB): the engine it
    // was placed on, or, when this replica placed none, its home, where every replica sends a first
    // sighting first. Without that credit each replica's first sighting went by its own load view, and
    // three replicas without shared placements agreed on fewer documents (workload B: hit ratio 0.61
    // against 0.67 with it; docs/performance.md).
    const spanCredit = tier === 1 ? Math.min(1, groupSpanTokens(prefix.keys) / full) : 0;
    for (let p = 0; p < count; p++) credit[p] = p === 0 ? Math.max(Math.min(1, prefix.keys.historyTokens / full), tierCredit, spanCredit) : p < tier ? tierCredit : 0;
    return count;
  }

  /** Pool positions of the `ranked` highest group weights, highest first. */
  #rankByGroup(n: number, ranked: number, weight: Uint32Array): Uint32Array {
    const out = (this.#byGroup = ensureUint32(this.#byGroup, n + 1));
    if (ranked <= SELECT_LIMIT) {
      topKInto(out, n, ranked, (i, j) => (weight[i] as number) > (weight[j] as number));
      return out;
    }
    // Weight × 2^21 + position is exact in a double (2^53), so one native sort orders both.
    const keys = (this.#sortKeys = ensureFloat64(this.#sortKeys, n));
    for (let i = 0; i < n; i++) keys[i] = (weight[i] as number) * 0x200000 + i;
    const sorted = keys.subarray(0, n).sort();
    for (let r = 0; r < ranked; r++) out[r] = (sorted[n - 1 - r] as number) % 0x200000;
    return out;
  }
}

/** The tiers of `byGroup` (the first `ranked` in group order), each reordered by the conversation's weight; only the places that are returned. */
function tierOrder(tier: number, byGroup: Uint32Array, ranked: number, wanted: number, conversationWeight: Uint32Array, order: Uint32Array): number {
  let count = 0;
  for (let start = 0; start < ranked && count < wanted; start += tier) {
    const end = Math.min(ranked, start + tier);
    const take = Math.min(end - start, wanted - count);
    const members = byGroup.subarray(start, end);
    const picked = topKInto(order.subarray(count), members.length, take, (i, j) => (conversationWeight[members[i] as number] as number) > (conversationWeight[members[j] as number] as number));
    for (let p = 0; p < picked; p++) order[count + p] = members[order[count + p] as number] as number;
    count += picked;
  }
  return count;
}

/**
 * The order of a rare group (a tier of one) that is followed: the engine it
 * was placed on, which holds its prefix as a home would, then the rest in
 * group order. Returns the places filled.
 */
function followPlacement(placed: number, byGroup: Uint32Array, ranked: number, wanted: number, order: Uint32Array): number {
  order[0] = placed;
  let count = 1;
  for (let r = 0; r < ranked && count < wanted; r++) if (byGroup[r] !== placed) order[count++] = byGroup[r] as number;
  return count;
}

/**
 * The group's whole span (its first {@link GROUP_BYTES}) lies in messages
 * before the first user message: a document or instructions an application
 * sends every user of it, so its first sighting is presumed shared and goes
 * home, where every replica sends it. The model's reuse estimate cannot say
 * so in time: a replica sees a new document first, and with several
 * replicas each saw a shared document about once (workload B at three
 * replicas without Redis: the estimate stayed under `minReuse`, first
 * sightings went by each replica's own load, and the hit ratio was 0.61-0.67
 * against the oracle's 0.83; docs/performance.md). A short opening (one
 * system prompt of a few hundred tokens) and a prompt that is the user's
 * own are left to the estimate. So is a group the fleet's shared placements
 * were asked about (Redis): there a first placement by load is stored for
 * every replica, and load places it better than a hash under overload.
 */
function opensWithTemplate(prefix: PrefixFacts): boolean {
  return prefix.fleetPlacement === undefined && prefix.keys.openingTokens * BYTES_PER_TOKEN >= GROUP_BYTES;
}

/** Estimated tokens of the span a group hash covers: its first {@link GROUP_BYTES}, or the whole prompt prefix when shorter. */
function groupSpanTokens(keys: PrefixKeys): number {
  return Math.min(GROUP_BYTES, keys.blockCount * BLOCK_BYTES) / BYTES_PER_TOKEN;
}

/** Pool position of the candidate whose id hash is `idHash`; -1 when none is (or no hash is given). */
function placedPosition<T extends Candidate>(context: PickContext<T>, idHash: number | undefined): number {
  if (idHash === undefined) return -1;
  const { candidates, pool, n } = context;
  for (let i = 0; i < n; i++) if ((candidates[pool[i] as number] as T).idHash === idHash) return i;
  return -1;
}

const prefixParameters = z.strictObject({
  epsilon: z.number().min(0).optional().describe('Load bound headroom over the mean load score (default: routing.prefix.epsilon).'),
  kappa: z.number().min(0).optional().describe('Extra headroom per unit of cache credit (default: routing.prefix.kappa).'),
  spread: z.number().min(1).optional().describe('Engines per prefix group per unit of traffic share x fleet size (default: routing.prefix.spread).'),
  minReuse: z.number().min(0).max(1).optional().describe('Share of reusable prompt tokens below which new prompts without an 8 KiB opening go by load (default: routing.prefix.minReuse).'),
});

/**
 * `prefix`: a walk of the prompt's two-level rendezvous order. The balance
 * floor holds only for a candidate with cache credit: a prompt nothing is
 * cached for has no reason to stay on a busier engine.
 */
export const prefixAffinityPlugin: AffinityPlugin<z.output<typeof prefixParameters>> = {
  name: 'prefix',
  readsPromptPrefix: true,
  description: "Keyless requests whose prompts share a prefix: the rendezvous order of the prompt's prefix group, so every replica sends repeated prefixes to the engines that cached them, under a load bound that grows with the cache credit.",
  parameters: prefixParameters,
  create: (parameters, defaults) => ({
    scorer: new PrefixAffinityScorer({
      spread: parameters.spread ?? defaults.prefix.spread,
      minReuse: parameters.minReuse ?? defaults.prefix.minReuse,
      fullCreditTokens: PREFIX_AFFINITY_DEFAULTS.fullCreditTokens,
    }),
    bound: { epsilon: parameters.epsilon ?? defaults.prefix.epsilon, kappa: parameters.kappa ?? defaults.prefix.kappa, floor: BALANCE_FLOOR, creditFloorOnly: true },
  }),
};

/**
 * Shared placements of prefix groups (Redis), as a request hook: every
 * replica follows one engine for a rare group (a document, a long system
 * prompt few share) instead of each its own.
 *
 * Without it, each replica places a group's first sighting where its own
 * load view says and follows its own placement after that: behind a
 * Service that spreads requests over three replicas, one shared document
 * lived on up to three engines, each holding a copy in its cache and
 * missing once per copy (workload B of `bench prefix-affinity`: hit ratio
 * 0.83 at one router, 0.61 at three). Here the engine a group's last
 * request went to is stored fleet-wide (`prefix-v1:<group>` →
 * engine id, first writer wins, as for sessions: router/state/shared-assignments.ts),
 * and each replica's first sighting of the group reads it.
 *
 * Only prompts whose placement the prefix walk follows are looked up:
 * keyless, without history (a conversation's later turns go by its own
 * hash, which every replica agrees on), of a group that is new here or rare
 * (a group spread over several engines follows no placement). That
 * includes new groups while the model's traffic shows little reuse, which
 * go by load (unless they open with a template, which goes home): a
 * document pasted into the user's message, arriving for the first time,
 * looks like that, and its first placement is the one to share.
 * Every first placement is stored provisionally (PROVISIONAL_TTL_MS), so
 * prompts that never come back (traffic without reuse, a new conversation's
 * first turn) leave at most a minute of keys in Redis; they do cost a GET
 * and a script call each. A replica's recent copy answers without a
 * promise. While Redis is degraded the replica's own placement decides, as
 * without Redis.
 *
 * A group's name is its 32-bit group hash, which is seeded by model, tenant
 * and `cache_salt` (prefix-keys.ts), in base 36: two groups that collide
 * share a placement, which costs at most a cache miss.
 */
import { hashString } from '../load/hash.ts';
import type { PrefixFacts, RequestFacts } from '../scheduling/candidate.ts';
import type { HookEndpoint, PreparedFacts, RequestHook } from './request-hooks.ts';

/** What the hook needs of the shared placements (router/state/shared-assignments.ts under PREFIX_PLACEMENT_SPACE). */
export interface PrefixPlacementsLookup {
  /** The placement this replica read or made recently, if still fresh; no I/O. */
  cached(name: string): string | undefined;
  /** The stored placement; null when there is none; undefined when Redis did not answer in time. Never rejects. */
  lookUp(name: string): Promise<string | null | undefined>;
  /** The group's request went to `to` (its first placement when `from` is undefined, else a move), kept `provisionalTtlMs` until read again when given. No await. */
  assign(name: string, from: string | undefined, to: string, provisionalTtlMs?: number): void;
}

/** When a group's placement is followed, as the prefix walk decides it (router/scheduling/scorers/prefix-affinity.ts). */
export interface PlacementRule {
  /** Whether a group with this share of `model`'s traffic lives on one engine (a first tier of one), so its placement is followed. */
  isRare(model: string, share: number): boolean;
}

/**
 * How long Redis keeps a group's first placement until some replica asks
 * for it (which keeps it as long as sessions): the group table's time
 * constant. It bounds what prompts sent once (traffic without reuse, a
 * conversation's first turn) leave in Redis to a minute of them.
 */
export const PROVISIONAL_TTL_MS = 60_000;

export class PrefixPlacementHook implements RequestHook {
  readonly #placements: PrefixPlacementsLookup;
  readonly #rule: PlacementRule;

  constructor(placements: PrefixPlacementsLookup, rule: PlacementRule) {
    this.#placements = placements;
    this.#rule = rule;
  }

  /** Sets `prefix.fleetPlacement`, and `prefix.placedOn` to its engine when one is stored. Runs after the prefix facts hook. */
  prepare(facts: PreparedFacts): Promise<void> | undefined {
    const prefix = facts.prefix;
    if (prefix === undefined || prefix.keys.historyTokens > 0) return undefined;
    // A group spread over several engines (one system prompt everyone sends) follows no placement:
    // storing where each of its requests went would be a Redis write per request for nothing.
    if (prefix.share > 0 && !this.#rule.isRare(facts.model, prefix.share)) return undefined;
    const name = nameOf(prefix.keys.group);
    const cached = this.#placements.cached(name);
    if (cached !== undefined) {
      facts.prefix = followed(prefix, cached);
      return undefined;
    }
    return this.#placements.lookUp(name).then((placed) => {
      // Undefined: Redis did not answer; the replica's own placement stands and nothing is stored.
      if (placed === undefined) return;
      facts.prefix = placed === null ? { ...prefix, fleetPlacement: null } : followed(prefix, placed);
    });
  }

  /** The group's request goes to `target`: stored when that is its first placement or a move. */
  admitted(facts: RequestFacts, target: HookEndpoint): void {
    const prefix = facts.prefix;
    if (prefix?.fleetPlacement === undefined || prefix.fleetPlacement === target.id) return;
    // A first placement may never be asked for again (a prompt sent once, a conversation whose later
    // turns go by their history): kept briefly unless some replica reads it. A move keeps its TTL.
    const from = prefix.fleetPlacement ?? undefined;
    this.#placements.assign(nameOf(prefix.keys.group), from, target.id, from === undefined ? PROVISIONAL_TTL_MS : undefined);
  }
}

/** The facts of a prompt whose group the fleet placed on `engine`: the prefix walk follows it there, crediting what its hash covers. */
function followed(prefix: PrefixFacts, engine: string): PrefixFacts {
  return { ...prefix, fleetPlacement: engine, placedOn: hashString(engine) };
}

function nameOf(group: number): string {
  return group.toString(36);
}

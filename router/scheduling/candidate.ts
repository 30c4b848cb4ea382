/**
 * What scheduling reads: the request's facts and each candidate endpoint's
 * live load. Scheduling is pure: given these, it returns candidates in the
 * order to try them. No I/O, no clocks, no globals; randomness comes in
 * through {@link Random}, and anything that needs time (EWMAs, the prefix
 * group table, learned limits) is read by the caller from the load view and
 * handed in as a fact.
 */
import type { EndpointView } from '../load/endpoint-view.ts';
import type { PrefixKeys } from './prefix-keys.ts';
import type { SaturationInputs } from './saturation.ts';

/** Returns a float in [0, 1). Injected so tests are deterministic. */
export type Random = () => number;

/**
 * The part of an endpoint's live state scheduling reads (the fields'
 * contracts are on {@link EndpointView}); the saturation filter's inputs
 * stay its own, with the safe-start bounds optional.
 */
export interface Candidate extends SaturationInputs, Pick<EndpointView, 'id' | 'idHash' | 'inFlight' | 'loadScore' | 'kvCacheUsage' | 'ejected' | 'attributes'> {}

/**
 * What the prefix-affinity scorer knows about a keyless request's prompt:
 * its keys (pure, from the canonical prompt prefix) and what the load view's
 * group table says about its group.
 */
export interface PrefixFacts {
  readonly keys: PrefixKeys;
  /** The group's share of the model's recent requests, 0-1. */
  readonly share: number;
  /** Tokens the group's consecutive requests have recently had in common (EWMA). */
  readonly sharedPrefixTokens: number;
  /**
   * Share of the model's recent prompt tokens that a cache could have served
   * (history plus group prefix), 0-1: low means the traffic has no reuse and
   * affinity would only cost balance.
   */
  readonly reuse: number;
  /** The engine (its id hash) this replica sent the group's last request to, if any: a rare group follows it (it holds the group's cache). */
  readonly placedOn?: number | undefined;
  /**
   * With Redis: the engine id the fleet's shared placement of the group names (the prefix
   * placement hook sets `placedOn` to it); null when none is stored; undefined when not
   * looked up (no Redis, Redis away, or a group whose placement is not followed).
   */
  readonly fleetPlacement?: string | null | undefined;
}

/** What scheduling may know about a request. Built once per request. */
export interface RequestFacts {
  /** The `model` the request names (or the default model), or the target a rewrite rule gave it. */
  readonly model: string;
  /** The model the client asked for, when a rewrite rule sent the request as another ({@link model}). */
  readonly requestedModel?: string | undefined;
  /** Id of the rewrite rules that did (`namespace/name`, or `config/<name>`). */
  readonly rewrite?: string | undefined;
  /** The body asked for `stream: true`. */
  readonly stream: boolean;
  /**
   * The session's name, if the request has a session key (header, else the
   * body's `user`): an HMAC of (tenant, model, key), never the key itself
   * (router/state/session-names.ts).
   */
  readonly sessionKey: string | undefined;
  /** The client's session key itself: only to read the name an older release stored (rolling upgrade). */
  readonly legacySessionKey?: string | undefined;
  /** Request body size in bytes. */
  readonly bodyBytes: number;
  /** Prompt-prefix facts, when the request's profile uses prefix affinity and the body has a prompt. */
  readonly prefix?: PrefixFacts | undefined;
  /** The requested model is a LoRA adapter of this base model (an engine's `/v1/models` lists it with this parent): LoRA affinity applies. */
  readonly loraBaseModel?: string | undefined;
  /** Endpoint id that stored the response named by `previous_response_id` (Responses API), when known. */
  readonly pinnedEndpoint?: string | undefined;
  /** Endpoint id the session key is assigned to fleet-wide (shared state), when known: kept while it passes the filters. */
  readonly assignedEndpoint?: string | undefined;
  /** The session has no engine yet and the one it gets will be stored fleet-wide: place it by load, not by hash. */
  readonly placeSession?: boolean | undefined;
  /** False once the request may no longer wait for its own engine at its burst bound (no router queue, or it waited long enough): it goes where new work goes. */
  readonly mayWaitForHome?: boolean | undefined;
}

/** How a decision was reached; the `outcome` label of the decisions metric. */
export const DECISION_OUTCOMES = [
  'affinity_hit',
  'affinity_spill',
  'no_key_fallback',
  'prefix_hit',
  'prefix_spill',
  'prefix_fallback',
  'lora_hit',
  'lora_spill',
  'pinned',
  'assigned',
  'placed',
  'least_load',
  'round_robin',
] as const;
/** One of {@link DECISION_OUTCOMES}. */
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/**
 * Why a session left its shared assignment: the engine was saturated, ejected, failed one of the
 * profile's own filters (filtered), or is no candidate any more (gone); the `reason` label of the
 * session-moves metric.
 */
export const ASSIGNMENT_MOVES = ['saturated', 'ejected', 'filtered', 'gone'] as const;
/** One of {@link ASSIGNMENT_MOVES}. */
export type AssignmentMove = (typeof ASSIGNMENT_MOVES)[number];

/** Most candidates a decision returns: the first choice plus the retry list. */
export const MAX_ORDERED = 8;

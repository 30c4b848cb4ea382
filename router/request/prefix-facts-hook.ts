/**
 * Prefix facts, as a request hook: for a keyless request whose model's
 * scheduling profile uses prefix affinity, the prompt's prefix keys and what
 * the group table says about them (its group's share, the prefix its
 * requests share, the model's reuse); once the request is admitted, its
 * group and the model's reuse learn from it. A request with a session key
 * goes by its session, so its prompt is never hashed.
 */
import type { RequestFacts } from '../scheduling/candidate.ts';
import { prefixKeys } from '../scheduling/prefix-keys.ts';
import type { PrefixGroups } from './prefix-groups.ts';
import type { HookEndpoint, PreparedFacts, RequestHook } from './request-hooks.ts';
import type { BodyFacts } from './routing-facts.ts';
import { tenantCacheSalt } from './tenant-cache-salt.ts';

/** Collaborators of the {@link PrefixFactsHook}. */
export interface PrefixFactsDeps {
  /** True when `model`'s scheduling profile uses prefix affinity. */
  usesPrefix(model: string): boolean;
  /** The prefix group table (shares, shared prefixes, the model's reuse). */
  readonly groups: Pick<PrefixGroups, 'read' | 'record'>;
  /** Epoch ms. */
  now(): number;
}

export class PrefixFactsHook implements RequestHook {
  readonly #deps: PrefixFactsDeps;

  constructor(deps: PrefixFactsDeps) {
    this.#deps = deps;
  }

  /** Sets `prefix` when it can matter: a keyless prompt under a profile that uses it. */
  prepare(facts: PreparedFacts, body: BodyFacts, tenant: string | undefined): undefined {
    const deps = this.#deps;
    if (facts.sessionKey !== undefined || body.promptPrefix === undefined || body.promptKind === undefined || !deps.usesPrefix(facts.model)) return undefined;
    // With API keys, groups are seeded by the tenant (as its engine cache is, by the tenant's cache_salt).
    const salt = tenant === undefined ? body.cacheSalt : tenantCacheSalt(tenant, body.cacheSalt);
    const keys = prefixKeys(facts.model, salt, body.promptKind, body.promptPrefix, body.promptTruncated);
    const group = deps.groups.read(facts.model, keys, deps.now());
    facts.prefix = { keys, share: group.share, sharedPrefixTokens: group.sharedPrefixTokens, reuse: group.reuse, placedOn: group.placedOn };
    return undefined;
  }

  /** The request was admitted and goes to `target` first: its group and the model's reuse count it, and the group's next request may follow it there. */
  admitted(facts: RequestFacts, target: HookEndpoint): void {
    if (facts.prefix !== undefined) this.#deps.groups.record(facts.model, facts.prefix.keys, this.#deps.now(), target.idHash);
  }
}

/**
 * The classify stage: from the request's headers and body facts, the facts
 * scheduling decides on. The model (named, else the default); the session
 * key (header, else the body's `user`); for a profile with prefix affinity,
 * the prompt's prefix keys and what the load view's group table and reuse
 * average say about them; for a Responses API follow-up, the engine that
 * stored the previous response. Also learns, after the decision and from the
 * answer, what later requests will need (groups, reuse, response pins).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { SwitchyardError } from '../errors/errors.ts';
import { firstHeaderValue } from '../header-value.ts';
import type { PrefixGroups } from '../load/prefix-groups.ts';
import { FOREIGN, type ResponsePins } from '../load/response-pins.ts';
import type { RequestFacts } from '../scheduling/candidate.ts';
import { prefixKeys } from '../scheduling/prefix-keys.ts';
import type { SessionName, SessionNames } from '../state/session-names.ts';
import { ResponseIdSearch } from './response-id.ts';
import type { BodyFacts } from './routing-facts.ts';
import { tenantCacheSalt } from './tenant-cache-salt.ts';

/** The models the router knows, as classification reads them. */
export interface ModelCatalogue {
  knowsModel(model: string): boolean;
  routableModels(): readonly string[];
}

/** Collaborators of the {@link Classifier}. */
export interface ClassifierDeps {
  readonly models: ModelCatalogue;
  /** Header that carries the session key. */
  readonly sessionHeader: string;
  /** Use the body's `user` field as the session key when the header is absent. */
  readonly sessionFromUser: boolean;
  /** Names sessions by (tenant, model, key) with the install's secret; the same on every replica. */
  readonly sessionNames: Pick<SessionNames, 'name'>;
  readonly defaultModel: string | undefined;
  /** True when `model`'s scheduling profile uses prefix affinity. */
  usesPrefix(model: string): boolean;
  /** The prefix group table (shares, shared prefixes, the model's reuse). */
  readonly groups: PrefixGroups;
  readonly pins: ResponsePins;
  /** Shared session assignments (Redis); absent without Redis, where rendezvous hashing keeps sessions together. */
  readonly sessions?: SessionAssignmentsLookup | undefined;
  /** Epoch ms. */
  now(): number;
}

/** What classification needs of the shared session assignments (router/state/session-assignments.ts). */
export interface SessionAssignmentsLookup {
  /** The assignment this replica read or made recently, if still fresh; no I/O. */
  cached(name: SessionName): string | undefined;
  /**
   * The stored assignment; null when Redis says there is none; undefined when Redis did not answer in time. Never rejects.
   * `legacyKey` (the client's key) lets a miss read what an older release stored (rolling upgrade).
   */
  lookUp(name: SessionName, legacyKey?: string): Promise<string | null | undefined>;
  /** Records that the session now goes to `to` (its first assignment when `from` is undefined, else a move). No await. */
  assign(name: SessionName, from: string | undefined, to: string): void;
}

/** The route whose answers name a stored response (Responses API). */
const RESPONSES_ROUTE = '/v1/responses';

export class Classifier {
  readonly #deps: ClassifierDeps;

  constructor(deps: ClassifierDeps) {
    this.#deps = deps;
  }

  /**
   * The request's scheduling facts. `tenant` is the API key's tenant
   * (undefined without API keys): a response another tenant stored is not its to continue.
   * @throws SwitchyardError 404 for a model no endpoint serves or a `previous_response_id`
   *   another tenant stored, 400 when the request names no model and there is no default.
   */
  classify(headers: IncomingHttpHeaders, body: BodyFacts, bodyBytes: number, tenant: string | undefined): RequestFacts {
    const deps = this.#deps;
    const model = body.model ?? this.#defaultModel();
    if (!deps.models.knowsModel(model)) throw new SwitchyardError('SWITCHYARD_MODEL_NOT_FOUND', `The model \`${model}\` does not exist.`, { param: 'model' });
    const clientKey = sessionKeyOf(headers[deps.sessionHeader]) ?? (deps.sessionFromUser ? body.user : undefined);
    // One namespace per tenant and model: the same key from two tenants, or for two models, is two sessions.
    const sessionKey = clientKey === undefined ? undefined : deps.sessionNames.name(tenant, model, clientKey);
    const pinnedEndpoint = body.previousResponseId === undefined ? undefined : pinnedEndpointOf(deps.pins, body.previousResponseId, tenant);
    const facts = { model, stream: body.stream, sessionKey, legacySessionKey: clientKey, bodyBytes, pinnedEndpoint };
    // Prefix keys only when they can matter: a keyless prompt under a profile that uses them.
    if (sessionKey !== undefined || body.promptPrefix === undefined || body.promptKind === undefined || !deps.usesPrefix(model)) return facts;
    // With API keys, groups are seeded by the tenant (as its engine cache is, by the tenant's cache_salt).
    const salt = tenant === undefined ? body.cacheSalt : tenantCacheSalt(tenant, body.cacheSalt);
    const keys = prefixKeys(model, salt, body.promptKind, body.promptPrefix, body.promptTruncated);
    const group = deps.groups.read(model, keys, deps.now());
    return { ...facts, prefix: { keys, share: group.share, sharedPrefixTokens: group.sharedPrefixTokens, reuse: group.reuse } };
  }

  /**
   * The session's shared engine assignment, when the request has a session
   * key and assignments are shared (Redis): at most one lookup, with the
   * replica's recent copy in front. Undefined when there is nothing to look
   * up, so a request without a session key awaits nothing.
   */
  lookUpAssignment(facts: RequestFacts): Promise<RequestFacts> | undefined {
    const sessions = this.#deps.sessions;
    if (sessions === undefined || facts.sessionKey === undefined) return undefined;
    // The classifier named it (classify): a SessionName, never the client's key.
    const name = facts.sessionKey as SessionName;
    const cached = sessions.cached(name);
    if (cached !== undefined) return Promise.resolve({ ...facts, assignedEndpoint: cached });
    // None stored: placed by load and stored. Unknown (Redis away): rendezvous hashing, which every replica agrees on.
    return sessions.lookUp(name, facts.legacySessionKey).then((assigned) => (assigned === undefined ? facts : assigned === null ? { ...facts, placeSession: true } : { ...facts, assignedEndpoint: assigned }));
  }

  /** The request was admitted to `target`: its group, the model's reuse and the session's assignment learn from it. */
  admitted(facts: RequestFacts, target: { readonly id: string }): void {
    if (facts.prefix !== undefined) this.#deps.groups.record(facts.model, facts.prefix.keys, this.#deps.now());
    if (facts.sessionKey !== undefined && facts.assignedEndpoint !== target.id) this.#deps.sessions?.assign(facts.sessionKey as SessionName, facts.assignedEndpoint, target.id);
  }

  /**
   * For one request on `route` whose answers name something later requests
   * refer to (the Responses API's stored response), a reader of the answer's
   * first chunks that learns which engine holds it; it returns true while it
   * wants the next chunk. Undefined for other routes. What it learns belongs
   * to `tenant` (undefined without API keys).
   */
  answerReader(route: string, tenant: string | undefined): ((endpointId: string, chunk: Buffer) => boolean) | undefined {
    if (route !== RESPONSES_ROUTE) return undefined;
    const search = new ResponseIdSearch();
    return (endpointId, chunk) => {
      const id = search.push(chunk);
      if (typeof id === 'string') this.#deps.pins.remember(id, endpointId, tenant);
      return id === undefined;
    };
  }

  #defaultModel(): string {
    const deps = this.#deps;
    if (deps.defaultModel !== undefined) return deps.defaultModel;
    const models = deps.models.routableModels();
    if (models.length === 1) return models[0] as string;
    throw new SwitchyardError('SWITCHYARD_MISSING_MODEL', 'The request must name a `model`.', { param: 'model' });
  }
}

/**
 * The engine that stored `responseId` for `tenant`, if known.
 * @throws SwitchyardError 404 in vLLM's words for an id it does not hold, when another tenant's
 *   request stored it: forwarded, the engine would continue that tenant's conversation (vLLM
 *   stores responses without an owner). The id echoed is one the router itself read from an answer.
 */
function pinnedEndpointOf(pins: ResponsePins, responseId: string, tenant: string | undefined): string | undefined {
  const pinned = pins.lookUp(responseId, tenant);
  if (pinned !== FOREIGN) return pinned;
  throw new SwitchyardError('SWITCHYARD_RESPONSE_NOT_FOUND', `Response with id '${responseId}' not found.`, { param: 'previous_response_id' });
}

function sessionKeyOf(value: string | string[] | undefined): string | undefined {
  const key = firstHeaderValue(value);
  return key === undefined || key === '' ? undefined : key;
}

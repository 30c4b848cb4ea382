/**
 * The classify stage: from the request's headers and body facts, the facts
 * every request has: its model (named, else the default), the base model
 * when that is a LoRA adapter, and its session's name (from the header,
 * else the body's `user`). The request's
 * facts are built here, once, in the shape the request hooks fill in
 * (prefix facts, a pinned or assigned engine): see request-hooks.ts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { SwitchyardError } from '../errors/errors.ts';
import { firstHeaderValue } from '../header-value.ts';
import type { SessionNames } from '../state/session-names.ts';
import type { ModelRewrites } from './model-rewrite.ts';
import type { PreparedFacts } from './request-hooks.ts';
import type { BodyFacts } from './routing-facts.ts';

/** The models the router knows, as classification reads them. */
export interface ModelCatalogue {
  knowsModel(model: string): boolean;
  routableModels(): readonly string[];
  /** The base model `model` is a LoRA adapter of, when an engine's `/v1/models` says so. */
  adapterParent(model: string): string | undefined;
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
  /** Model rewrites (InferenceModelRewrite, config file); undefined: none. */
  readonly rewrites?: Pick<ModelRewrites, 'rewrite'> | undefined;
}

export class Classifier {
  readonly #deps: ClassifierDeps;

  constructor(deps: ClassifierDeps) {
    this.#deps = deps;
  }

  /**
   * The request's facts, before the hooks add theirs. `tenant` is the API
   * key's tenant (undefined without API keys): sessions are named per tenant.
   * A rewrite rule that matches the model replaces it, unless `rewritable` is
   * false (a body the router cannot rewrite: multipart).
   * @throws SwitchyardError 404 for a model no endpoint serves, 400 when the
   *   request names no model and there is no default.
   */
  classify(headers: IncomingHttpHeaders, body: BodyFacts, bodyBytes: number, tenant: string | undefined, rewritable = true): PreparedFacts {
    const deps = this.#deps;
    const clientKey = sessionKeyOf(headers[deps.sessionHeader]) ?? (deps.sessionFromUser ? body.user : undefined);
    const requested = body.model ?? this.#defaultModel();
    // Before the model check: an alias a rule rewrites need not be served by any engine.
    const rewrite = rewritable ? deps.rewrites?.rewrite(requested, clientKey) : undefined;
    const model = rewrite?.model ?? requested;
    if (!deps.models.knowsModel(model)) throw new SwitchyardError('SWITCHYARD_MODEL_NOT_FOUND', `The model \`${model}\` does not exist.`, { param: 'model' });
    // One namespace per tenant and model: the same key from two tenants, or for two models, is two sessions.
    const sessionKey = clientKey === undefined ? undefined : deps.sessionNames.name(tenant, model, clientKey);
    // Every field a hook may set is here from the start: one shape for every request's facts.
    return { model, requestedModel: rewrite === undefined ? undefined : requested, rewrite: rewrite?.rule, stream: body.stream, sessionKey, legacySessionKey: clientKey, bodyBytes, loraBaseModel: deps.models.adapterParent(model), prefix: undefined, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined };
  }

  #defaultModel(): string {
    const deps = this.#deps;
    if (deps.defaultModel !== undefined) return deps.defaultModel;
    const models = deps.models.routableModels();
    if (models.length === 1) return models[0] as string;
    throw new SwitchyardError('SWITCHYARD_MISSING_MODEL', 'The request must name a `model`.', { param: 'model' });
  }
}

function sessionKeyOf(value: string | string[] | undefined): string | undefined {
  const key = firstHeaderValue(value);
  return key === undefined || key === '' ? undefined : key;
}

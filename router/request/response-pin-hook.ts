/**
 * Response pins, as a request hook: a Responses API request that names a
 * `previous_response_id` goes to the engine that stored that response
 * (vLLM keeps stored responses in the engine process, so this is
 * correctness, not preference), and each Responses answer teaches the pin
 * table which engine stored the response it names. Only the Responses route's
 * answers are read; every other route's cost the request nothing.
 */
import { SwitchyardError } from '../errors/errors.ts';
import type { AnswerReader, HookEndpoint, PreparedFacts, RequestHook } from './request-hooks.ts';
import { ResponseIdSearch } from './response-id.ts';
import { FOREIGN, type ResponsePins } from './response-pins.ts';
import type { BodyFacts } from './routing-facts.ts';

/** The route whose answers name a stored response (Responses API). */
const RESPONSES_ROUTE = '/v1/responses';

export class ResponsePinHook implements RequestHook {
  readonly #pins: Pick<ResponsePins, 'lookUp' | 'remember'>;

  constructor(pins: Pick<ResponsePins, 'lookUp' | 'remember'>) {
    this.#pins = pins;
  }

  /**
   * Sets `pinnedEndpoint` to the engine that stored the response the body
   * continues, when known for `tenant` (undefined without API keys).
   * @throws SwitchyardError 404 in vLLM's words for an id it does not hold, when another tenant's
   *   request stored it: forwarded, the engine would continue that tenant's conversation (vLLM
   *   stores responses without an owner). The id echoed is one the router itself read from an answer.
   */
  prepare(facts: PreparedFacts, body: BodyFacts, tenant: string | undefined): undefined {
    const responseId = body.previousResponseId;
    if (responseId === undefined) return undefined;
    const pinned = this.#pins.lookUp(responseId, tenant);
    if (pinned === FOREIGN) throw new SwitchyardError('SWITCHYARD_RESPONSE_NOT_FOUND', `Response with id '${responseId}' not found.`, { param: 'previous_response_id' });
    facts.pinnedEndpoint = pinned;
    return undefined;
  }

  /** For a Responses request, a reader that learns which engine stored the answer's response, for `tenant`. */
  readAnswer(route: string, tenant: string | undefined): AnswerReader | undefined {
    return route === RESPONSES_ROUTE ? new PinLearner(this.#pins, tenant) : undefined;
  }
}

/** One Responses answer's search for its response id, remembered as pinned to the engine that sent it. */
class PinLearner extends ResponseIdSearch implements AnswerReader {
  readonly #pins: Pick<ResponsePins, 'remember'>;
  readonly #tenant: string | undefined;

  constructor(pins: Pick<ResponsePins, 'remember'>, tenant: string | undefined) {
    super();
    this.#pins = pins;
    this.#tenant = tenant;
  }

  answerBytes(endpoint: HookEndpoint, chunk: Buffer): boolean {
    const id = this.push(chunk);
    if (typeof id === 'string') this.#pins.remember(id, endpoint.id, this.#tenant);
    return id === undefined;
  }
}

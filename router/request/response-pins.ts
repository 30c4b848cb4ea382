/**
 * Which engine stored each Responses API response, so a request naming it as
 * `previous_response_id` reaches the one engine that can continue it. vLLM
 * keeps stored responses in the engine process, so this is correctness, not
 * preference. Learned from the response's first body bytes (see
 * router/request/response-id.ts); bounded (least recently used out) so a
 * flood of responses cannot grow it. Per replica: a follow-up that reaches
 * another replica is not pinned until replicas share this table (Redis).
 *
 * Each pin also records the tenant whose request created the response (with
 * API keys on). vLLM stores responses without an owner: any client that sends
 * a stored id to its engine continues that conversation and reads its
 * history. So a pin is only ever handed to the tenant that made it; to any
 * other it is {@link FOREIGN}, which the caller refuses as an unknown id.
 */

/** Pins remembered before the least recently used is dropped. */
export const DEFAULT_MAX_PINS = 100_000;

/** {@link ResponsePins.lookUp}'s answer for a response another tenant stored. */
export const FOREIGN = Symbol('foreign response');

interface Pin {
  readonly endpointId: string;
  /** The tenant that created the response; undefined without API keys (one tenant). */
  readonly tenant: string | undefined;
}

export class ResponsePins {
  readonly #max: number;
  /** Response id → pin, least recently used first (Map insertion order). */
  readonly #pins = new Map<string, Pin>();

  constructor(maxPins = DEFAULT_MAX_PINS) {
    this.#max = maxPins;
  }

  /** Records that `endpointId` stored response `responseId` for `tenant` (undefined without API keys). */
  remember(responseId: string, endpointId: string, tenant: string | undefined): void {
    this.#pins.delete(responseId);
    if (this.#pins.size >= this.#max) this.#pins.delete(this.#pins.keys().next().value as string);
    this.#pins.set(responseId, { endpointId, tenant });
  }

  /**
   * The endpoint that stored `responseId` for `tenant`, if known (its recency
   * refreshed); {@link FOREIGN} when another tenant's request stored it (its
   * recency untouched, so another tenant's probes do not keep it).
   */
  lookUp(responseId: string, tenant: string | undefined): string | typeof FOREIGN | undefined {
    const pin = this.#pins.get(responseId);
    if (pin === undefined) return undefined;
    if (pin.tenant !== tenant) return FOREIGN;
    this.#pins.delete(responseId);
    this.#pins.set(responseId, pin);
    return pin.endpointId;
  }

  get size(): number {
    return this.#pins.size;
  }
}

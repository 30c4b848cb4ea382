/**
 * Which engine stored each Responses API response, so a request naming it as
 * `previous_response_id` reaches the one engine that can continue it. vLLM
 * keeps stored responses in the engine process, so this is correctness, not
 * preference. Learned from the response's first body bytes (see
 * router/request/response-id.ts); bounded (least recently used out) so a
 * flood of responses cannot grow it. Per replica: a follow-up that reaches
 * another replica is not pinned until replicas share this table (Redis).
 */

/** Pins remembered before the least recently used is dropped. */
export const DEFAULT_MAX_PINS = 100_000;

export class ResponsePins {
  readonly #max: number;
  /** Response id → endpoint id, least recently used first (Map insertion order). */
  readonly #pins = new Map<string, string>();

  constructor(maxPins = DEFAULT_MAX_PINS) {
    this.#max = maxPins;
  }

  /** Records that `endpointId` stored response `responseId`. */
  remember(responseId: string, endpointId: string): void {
    this.#pins.delete(responseId);
    if (this.#pins.size >= this.#max) this.#pins.delete(this.#pins.keys().next().value as string);
    this.#pins.set(responseId, endpointId);
  }

  /** The endpoint that stored `responseId`, if known; refreshes its recency. */
  endpointOf(responseId: string): string | undefined {
    const endpoint = this.#pins.get(responseId);
    if (endpoint !== undefined) {
      this.#pins.delete(responseId);
      this.#pins.set(responseId, endpoint);
    }
    return endpoint;
  }

  get size(): number {
    return this.#pins.size;
  }
}

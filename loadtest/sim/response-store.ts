/**
 * The simulator's Responses API memory, kept in the engine process as vLLM
 * keeps it (serving_responses.py: `response_store` and `msg_store`): for each
 * stored response, the chat messages its prompt was rendered from and the
 * text it generated. A request naming it as `previous_response_id` continues
 * that conversation, on this engine only; any other engine answers 404 with
 * vLLM's "Response with id '…' not found." That is what makes the router's
 * response pin a matter of correctness.
 *
 * Differences from vLLM, on purpose: vLLM stores only when started with
 * `VLLM_ENABLE_RESPONSES_API_STORE=1` and never evicts; the simulator always
 * honours `store` (default true) and keeps at most `limit` responses, the
 * oldest stored first out, so a long benchmark stays bounded. Like vLLM, a
 * response is stored once it has completed, so naming one still being
 * generated (or cut short) is answered 404 as well.
 */
import { randomBytes } from 'node:crypto';

/** Responses one simulator keeps by default. */
export const DEFAULT_STORED_RESPONSES = 10_000;

/** One chat message as the simulator's template renders it (chat-template.ts). */
export interface ChatMessage {
  readonly role: string;
  readonly content: unknown;
}

/** One admitted Responses API request: what to generate and how to answer. */
export interface ResponseTurn {
  /** `resp_` and 32 hex digits, as vLLM's `random_uuid()` makes them; unique across simulators. */
  readonly id: string;
  /** The id of the answer's one output message. */
  readonly messageId: string;
  readonly previousResponseId: string | null;
  readonly instructions: string | null;
  readonly stream: boolean;
  readonly store: boolean;
  /** The prompt as chat messages: instructions, the previous response's messages and output, then the new input. */
  readonly messages: readonly ChatMessage[];
  /** `{model, messages}`: a chat body of the prompt, for the prefix-cache models (engine-kv.ts, prefix-cache.ts). */
  readonly prompt: Readonly<Record<string, unknown>>;
}

/** The request can run, or the error vLLM answers before scheduling it. */
export type ResponseOpening =
  | { readonly ok: true; readonly turn: ResponseTurn }
  | { readonly ok: false; readonly status: 400 | 404; readonly error: VllmErrorBody };

/** vLLM's current error body (entrypoints/openai engine protocol: ErrorResponse of ErrorInfo). */
export interface VllmErrorBody {
  readonly error: { readonly message: string; readonly type: string; readonly param: string | null; readonly code: number };
}

interface StoredResponse {
  readonly messages: readonly ChatMessage[];
  readonly output: string;
}

/** The stored responses of one simulated engine; see the file header. */
export class ResponseStore {
  readonly #limit: number;
  /** Response id → what continues it, oldest stored first (Map insertion order). */
  readonly #stored = new Map<string, StoredResponse>();

  /** `limit`: responses kept (≥ 1); the oldest is dropped to store one more. */
  constructor(limit = DEFAULT_STORED_RESPONSES) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`stored responses limit must be a positive integer, got ${limit}`);
    this.#limit = limit;
  }

  /** Responses stored now. */
  get size(): number {
    return this.#stored.size;
  }

  /** True when this engine can continue response `id`. */
  has(id: string): boolean {
    return this.#stored.has(id);
  }

  /**
   * Validates a `POST /v1/responses` body (parsed JSON, model already
   * checked) and builds its prompt, looking up `previous_response_id`: 400
   * for a body vLLM would refuse to parse, 404 for a previous response this
   * engine does not hold.
   */
  open(payload: Readonly<Record<string, unknown>>): ResponseOpening {
    const input = inputMessages(payload['input']);
    if (input === undefined) return badRequest('`input` must be a string or an array of input items.', 'input');
    const previous = payload['previous_response_id'];
    if (previous !== undefined && previous !== null && typeof previous !== 'string') return badRequest('`previous_response_id` must be a string.', 'previous_response_id');
    const instructions = typeof payload['instructions'] === 'string' ? payload['instructions'] : null;
    const messages: ChatMessage[] = instructions === null ? [] : [{ role: 'system', content: instructions }];
    if (typeof previous === 'string') {
      const stored = this.#stored.get(previous);
      if (stored === undefined) return { ok: false, status: 404, error: vllmError(`Response with id '${previous}' not found.`, 'invalid_request_error', 'response_id', 404) };
      messages.push(...stored.messages);
      if (stored.output !== '') messages.push({ role: 'assistant', content: stored.output });
    }
    messages.push(...input);
    const turn: ResponseTurn = {
      id: `resp_${randomBytes(16).toString('hex')}`,
      messageId: `msg_${randomBytes(16).toString('hex')}`,
      previousResponseId: typeof previous === 'string' ? previous : null,
      instructions,
      stream: payload['stream'] === true,
      // vLLM's default is true; only an explicit false opts out.
      store: payload['store'] !== false,
      messages,
      prompt: { model: payload['model'], messages },
    };
    return { ok: true, turn };
  }

  /** Stores `turn` (when it asked to be stored) once it completed with `output` as its text. */
  save(turn: ResponseTurn, output: string): void {
    if (!turn.store) return;
    if (this.#stored.size >= this.#limit) this.#stored.delete(this.#stored.keys().next().value as string);
    this.#stored.set(turn.id, { messages: turn.messages, output });
  }
}

/**
 * The input as chat messages: a string is one user message; an array keeps
 * its role-tagged items (`{role, content}` with or without `type: "message"`;
 * content as a string or `input_text` parts, which the template reads) and
 * turns any other item (a function call or its output) into a user message
 * of its JSON. Undefined when `input` is neither.
 */
function inputMessages(input: unknown): ChatMessage[] | undefined {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) return undefined;
  const out: ChatMessage[] = [];
  for (const item of input as unknown[]) {
    if (typeof item !== 'object' || item === null) return undefined;
    const fields = item as Record<string, unknown>;
    out.push(typeof fields['role'] === 'string' ? { role: fields['role'], content: fields['content'] } : { role: 'user', content: JSON.stringify(item) });
  }
  return out;
}

function badRequest(message: string, param: string): ResponseOpening {
  return { ok: false, status: 400, error: vllmError(message, 'BadRequestError', param, 400) };
}

function vllmError(message: string, type: string, param: string | null, code: number): VllmErrorBody {
  return { error: { message, type, param, code } };
}

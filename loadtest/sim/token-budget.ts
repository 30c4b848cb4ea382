/**
 * How long a simulated answer is and what its `usage` reports.
 *
 * vLLM generates until the model's end-of-sequence token or `max_tokens`
 * (`max_completion_tokens` for chat, which wins when both are given),
 * whichever comes first; `ignore_eos: true`, the vLLM extension load tools
 * send so that answer lengths hold, makes it generate exactly `max_tokens`.
 * The simulator's end of sequence is its `outputTokens` knob. Token counts
 * are pseudo-tokens, as everywhere in the simulator (block-hash.ts): 4 bytes
 * of UTF-8 text each.
 */
import { TOKEN_BYTES } from './block-hash.ts';

/**
 * The longest answer the simulator generates: the `max_model_len` its
 * `/v1/models` lists. A request asking for more is cut there rather than
 * refused, which is enough for a simulator and keeps a huge `max_tokens`
 * with `ignore_eos` from building millions of events.
 */
const MAX_MODEL_LEN = 8192;

/** An answer's length in tokens, and whether the request's token limit decided it. */
export interface AnswerLength {
  readonly tokens: number;
  /** True when `max_tokens` set the length (finish_reason `length`), false when the answer ended on its own. */
  readonly cut: boolean;
}

/** The OpenAI `usage` object. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** The request's token limit, when it sets a usable one (vLLM refuses limits below 1; the simulator ignores them). */
function tokenLimit(payload: Readonly<Record<string, unknown>>): number | undefined {
  for (const key of ['max_completion_tokens', 'max_tokens']) {
    const value = payload[key];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return Math.min(value, MAX_MODEL_LEN);
  }
  return undefined;
}

/** The length of the answer to `payload` from an engine whose answers end on their own after `natural` tokens. */
export function answerLength(natural: number, payload: Readonly<Record<string, unknown>>): AnswerLength {
  const limit = tokenLimit(payload);
  if (limit === undefined) return { tokens: natural, cut: false };
  if (payload['ignore_eos'] === true || limit < natural) return { tokens: limit, cut: true };
  return { tokens: natural, cut: false };
}

/** True when a streamed request asks for a final usage chunk (`stream_options.include_usage`). */
export function wantsStreamUsage(payload: Readonly<Record<string, unknown>>): boolean {
  const options = payload['stream_options'];
  return typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true;
}

/**
 * Pseudo-tokens of a chat or completion prompt: its message contents (or
 * prompt text) in UTF-8 bytes ÷ 4, rounded up. Only the text is counted, not
 * a rendered template: this sits on every non-streamed answer's path, and
 * rendering a large history again costs the engine's core real time.
 */
export function promptTokens(payload: Readonly<Record<string, unknown>>): number {
  const messages = payload['messages'];
  let bytes = 0;
  if (Array.isArray(messages)) {
    for (const message of messages) {
      const content = (message as { content?: unknown } | null)?.content;
      bytes += typeof content === 'string' ? Buffer.byteLength(content) : content === undefined || content === null ? 0 : Buffer.byteLength(JSON.stringify(content));
    }
  } else {
    const prompt = payload['prompt'];
    bytes = typeof prompt === 'string' ? Buffer.byteLength(prompt) : prompt === undefined ? 0 : Buffer.byteLength(JSON.stringify(prompt));
  }
  return Math.ceil(bytes / TOKEN_BYTES);
}

/** The usage of an answer of `completion` tokens to a prompt of `prompt` tokens. */
export function usageOf(prompt: number, completion: number): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

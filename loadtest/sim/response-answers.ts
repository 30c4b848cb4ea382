/**
 * The bodies of the simulator's Responses API answers, in vLLM's shapes
 * (serving_responses.py, responses protocol): one response object when not
 * streamed; when streamed, named SSE events (`event: <type>` then `data:`)
 * numbered by `sequence_number`, with no `[DONE]` at the end.
 *
 * The response object lists `id` first, as vLLM's pydantic model does, and
 * `response.created` is the first event, so the id is in the first bytes an
 * engine writes: the router learns which engine stored the response from
 * exactly that (router/request/response-id.ts).
 */
import { generatedText } from './answers.ts';
import { tokenText } from './content.ts';
import type { SimKnobs } from './knobs.ts';

/** What a Responses API answer says about its request and prompt. */
export interface ResponseFacts {
  readonly id: string;
  readonly messageId: string;
  readonly model: string;
  readonly previousResponseId: string | null;
  readonly instructions: string | null;
  /** Prompt tokens, and how many of them were cached (usage). */
  readonly inputTokens: number;
  readonly cachedTokens: number;
}

/** A streamed answer: `head` is written at once (vLLM announces the response before its first token), then one `steps` entry per token. */
export interface ResponseStream {
  readonly head: string;
  readonly steps: readonly string[];
}

/** The simulator's max_model_len, as `/v1/models` reports it. */
const MAX_MODEL_LEN = 8192;

function created(): number {
  return 1_700_000_000;
}

/** A named SSE event, as vLLM's `_convert_stream_to_sse_events` writes it. */
function namedEvent(type: string, sequence: number, fields: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ ...fields, sequence_number: sequence, type })}\n\n`;
}

/** The one output message's text part. */
function textPart(text: string): unknown {
  return { annotations: [], text, type: 'output_text', logprobs: null };
}

function message(facts: ResponseFacts, text: string, status: 'in_progress' | 'completed'): unknown {
  return { id: facts.messageId, content: status === 'completed' ? [textPart(text)] : [], role: 'assistant', status, type: 'message' };
}

/**
 * The response object: `in_progress` with no output and no usage (what
 * `response.created` carries), or `completed` with the generated text.
 */
export function responseObject(facts: ResponseFacts, knobs: SimKnobs, status: 'in_progress' | 'completed'): unknown {
  const done = status === 'completed';
  return {
    id: facts.id,
    created_at: created(),
    incomplete_details: null,
    instructions: facts.instructions,
    metadata: null,
    model: facts.model,
    object: 'response',
    output: done ? [message(facts, generatedText(knobs, undefined, 0), 'completed')] : [],
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    background: false,
    max_output_tokens: Math.max(1, MAX_MODEL_LEN - facts.inputTokens),
    max_tool_calls: null,
    previous_response_id: facts.previousResponseId,
    prompt: null,
    reasoning: null,
    service_tier: 'auto',
    status,
    text: null,
    top_logprobs: null,
    truncation: 'disabled',
    usage: done
      ? {
          input_tokens: facts.inputTokens,
          input_tokens_details: { cached_tokens: facts.cachedTokens },
          output_tokens: knobs.outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: facts.inputTokens + knobs.outputTokens,
        }
      : null,
    user: null,
  };
}

/**
 * The SSE events of a streamed answer, in vLLM's order: `response.created`
 * and `response.in_progress`; the message and its text part added with the
 * first `response.output_text.delta`; one delta per further token; then the
 * text, part and message done with `response.completed`.
 */
export function responseEvents(facts: ResponseFacts, knobs: SimKnobs): ResponseStream {
  let sequence = 0;
  const next = (type: string, fields: Record<string, unknown>) => namedEvent(type, sequence++, fields);
  const initial = responseObject(facts, knobs, 'in_progress');
  const head = next('response.created', { response: initial }) + next('response.in_progress', { response: initial });
  const item = { item_id: facts.messageId, output_index: 0, content_index: 0 };
  let opening = next('response.output_item.added', { item: message(facts, '', 'in_progress'), output_index: 0 });
  opening += next('response.content_part.added', { ...item, part: textPart('') });
  const steps: string[] = [];
  for (let i = 0; i < knobs.outputTokens; i++) {
    const delta = next('response.output_text.delta', { ...item, delta: tokenText(i), logprobs: [] });
    steps.push(i === 0 ? opening + delta : delta);
  }
  if (knobs.outputTokens === 0) steps.push(opening);
  const text = generatedText(knobs, undefined, 0);
  steps.push(
    next('response.output_text.done', { ...item, text, logprobs: [] }) +
      next('response.content_part.done', { ...item, part: textPart(text) }) +
      next('response.output_item.done', { item: message(facts, text, 'completed'), output_index: 0 }) +
      next('response.completed', { response: responseObject(facts, knobs, 'completed') }),
  );
  return { head, steps };
}

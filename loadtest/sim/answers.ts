/**
 * The bodies of the simulator's chat and completion answers, in vLLM's
 * OpenAI-compatible shapes: SSE events when streamed, one JSON object when
 * not, and the generated text a client resends as the assistant's turn.
 */
import { renderToolCalls } from './chat-template.ts';
import { fragments, sseEvent, tokenText, toolArguments } from './content.ts';
import type { SimKnobs } from './knobs.ts';
import type { Usage } from './token-budget.ts';

/**
 * How an answer ends: whether the request's token limit cut it (finish_reason
 * `length` instead of `stop`) and the usage it reports. A stream carries its
 * usage in a last chunk with no choices, only when the request asked for it
 * (`stream_options.include_usage`), as vLLM and OpenAI send it.
 */
export interface AnswerEnding {
  readonly cut: boolean;
  readonly usage: Usage | undefined;
}

/** The usage of answers built without an ending: the simulator's fixed 8-token prompt. */
function defaultUsage(knobs: SimKnobs): Usage {
  return { prompt_tokens: 8, completion_tokens: knobs.outputTokens, total_tokens: 8 + knobs.outputTokens };
}

/**
 * The names of the tools a chat request offers (function tools, in order;
 * `get_weather` for one without a name), or undefined when it offers none or
 * says `tool_choice: "none"`: the answer then has content instead of calls.
 */
export function offeredTools(payload: Record<string, unknown>): readonly string[] | undefined {
  const tools = payload['tools'];
  if (!Array.isArray(tools) || tools.length === 0 || payload['tool_choice'] === 'none') return undefined;
  return tools.map((tool: unknown) => {
    const name = (tool as { function?: { name?: unknown } } | null)?.function?.name;
    return typeof name === 'string' && name !== '' ? name : 'get_weather';
  });
}

/** One tool call of an answer: `knobs.toolCalls` of them, naming the offered tools in turn. */
interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

function toolCalls(knobs: SimKnobs, tools: readonly string[], seed: number): ToolCall[] {
  return Array.from({ length: Math.max(1, Math.floor(knobs.toolCalls)) }, (_, i) => ({
    id: i === 0 ? `call_${seed}` : `call_${seed}_${i}`,
    name: tools[i % tools.length] as string,
    arguments: toolArguments(knobs.toolArgsBytes, seed + i),
  }));
}

/**
 * The text of an answer as the client sees it and resends it as history:
 * the content tokens, or the tool calls as the simulator's chat template
 * renders them (so the next turn's prompt hits the output's blocks).
 */
export function generatedText(knobs: SimKnobs, tools: readonly string[] | undefined, seed: number): string {
  if (tools !== undefined) return renderToolCalls(toolCalls(knobs, tools, seed).map((call) => ({ function: { name: call.name, arguments: call.arguments } })));
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  return text;
}

function created(): number {
  return 1_700_000_000;
}

/**
 * The SSE events of a streamed chat answer: role, content tokens (or the
 * tool calls in fragments), finish. Several tool calls each open with their
 * index, id and name, and then their argument fragments interleave
 * call by call, as a parallel decoder sends them: the order in which a
 * client that accumulates by position instead of by `index` mixes them up.
 */
export function chatEvents(model: string, id: string, knobs: SimKnobs, tools: readonly string[] | undefined, seed: number, ending?: AnswerEnding): string[] {
  const base = { id, object: 'chat.completion.chunk', created: created(), model };
  const chunk = (delta: unknown, finish: string | null) => sseEvent({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const events = [chunk({ role: 'assistant', content: '' }, null)];
  if (tools !== undefined) {
    const calls = toolCalls(knobs, tools, seed);
    calls.forEach((call, index) => events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null)));
    const parts = calls.map((call) => fragments(call.arguments, Math.max(4, knobs.outputTokens)));
    for (let step = 0; parts.some((p) => step < p.length); step++) {
      parts.forEach((p, index) => {
        if (step < p.length) events.push(chunk({ tool_calls: [{ index, function: { arguments: p[step] } }] }, null));
      });
    }
    events.push(chunk({}, 'tool_calls'));
  } else {
    for (let i = 0; i < knobs.outputTokens; i++) events.push(chunk({ content: tokenText(i) }, null));
    events.push(chunk({}, ending?.cut === true ? 'length' : 'stop'));
  }
  if (ending?.usage !== undefined) events.push(sseEvent({ ...base, choices: [], usage: ending.usage }));
  return events;
}

/** The SSE events of a streamed completion: one per token, then a final `length` event. */
export function completionEvents(model: string, id: string, knobs: SimKnobs, ending?: AnswerEnding): string[] {
  const base = { id, object: 'text_completion', created: created(), model };
  const event = (text: string, finish: string | null) => sseEvent({ ...base, choices: [{ index: 0, text, logprobs: null, finish_reason: finish }] });
  const events: string[] = [];
  for (let i = 0; i < knobs.outputTokens; i++) events.push(event(tokenText(i), null));
  events.push(event('', 'length'));
  if (ending?.usage !== undefined) events.push(sseEvent({ ...base, choices: [], usage: ending.usage }));
  return events;
}

/** A non-streamed chat answer, `usage` included. */
export function chatCompletion(model: string, id: string, knobs: SimKnobs, tools: readonly string[] | undefined, seed: number, ending?: AnswerEnding): unknown {
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  const message =
    tools !== undefined
      ? { role: 'assistant', content: null, tool_calls: toolCalls(knobs, tools, seed).map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
      : { role: 'assistant', content: text };
  return {
    id,
    object: 'chat.completion',
    created: created(),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: tools !== undefined ? 'tool_calls' : ending?.cut === true ? 'length' : 'stop' }],
    usage: ending?.usage ?? defaultUsage(knobs),
  };
}

/** A non-streamed completion answer, `usage` included. */
export function textCompletion(model: string, id: string, knobs: SimKnobs, ending?: AnswerEnding): unknown {
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  return { id, object: 'text_completion', created: created(), model, choices: [{ index: 0, text, logprobs: null, finish_reason: 'length' }], usage: ending?.usage ?? defaultUsage(knobs) };
}

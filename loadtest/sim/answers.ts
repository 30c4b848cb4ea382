/**
 * The bodies of the simulator's chat and completion answers, in vLLM's
 * OpenAI-compatible shapes: SSE events when streamed, one JSON object when
 * not, and the generated text a client resends as the assistant's turn.
 */
import { renderToolCalls } from './chat-template.ts';
import { fragments, sseEvent, tokenText, toolArguments } from './content.ts';
import type { SimKnobs } from './knobs.ts';

/**
 * The text of an answer as the client sees it and resends it as history:
 * the content tokens, or the tool call as the simulator's chat template
 * renders it (so the next turn's prompt hits the output's blocks).
 */
export function generatedText(knobs: SimKnobs, tools: boolean, seed: number): string {
  if (tools) return renderToolCalls([{ function: { name: 'get_weather', arguments: toolArguments(knobs.toolArgsBytes, seed) } }]);
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  return text;
}

function created(): number {
  return 1_700_000_000;
}

/** The SSE events of a streamed chat answer: role, content tokens (or one tool call in fragments), finish. */
export function chatEvents(model: string, id: string, knobs: SimKnobs, tools: boolean, seed: number): string[] {
  const base = { id, object: 'chat.completion.chunk', created: created(), model };
  const chunk = (delta: unknown, finish: string | null) => sseEvent({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const events = [chunk({ role: 'assistant', content: '' }, null)];
  if (tools) {
    events.push(chunk({ tool_calls: [{ index: 0, id: `call_${seed}`, type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null));
    for (const part of fragments(toolArguments(knobs.toolArgsBytes, seed), Math.max(4, knobs.outputTokens))) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }, null));
    }
    events.push(chunk({}, 'tool_calls'));
  } else {
    for (let i = 0; i < knobs.outputTokens; i++) events.push(chunk({ content: tokenText(i) }, null));
    events.push(chunk({}, 'stop'));
  }
  return events;
}

/** The SSE events of a streamed completion: one per token, then a final `length` event. */
export function completionEvents(model: string, id: string, knobs: SimKnobs): string[] {
  const event = (text: string, finish: string | null) =>
    sseEvent({ id, object: 'text_completion', created: created(), model, choices: [{ index: 0, text, logprobs: null, finish_reason: finish }] });
  const events: string[] = [];
  for (let i = 0; i < knobs.outputTokens; i++) events.push(event(tokenText(i), null));
  events.push(event('', 'length'));
  return events;
}

/** A non-streamed chat answer, `usage` included. */
export function chatCompletion(model: string, id: string, knobs: SimKnobs, tools: boolean, seed: number): unknown {
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  const message = tools
    ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${seed}`, type: 'function', function: { name: 'get_weather', arguments: toolArguments(knobs.toolArgsBytes, seed) } }] }
    : { role: 'assistant', content: text };
  return {
    id,
    object: 'chat.completion',
    created: created(),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: tools ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 8, completion_tokens: knobs.outputTokens, total_tokens: 8 + knobs.outputTokens },
  };
}

/** A non-streamed completion answer. */
export function textCompletion(model: string, id: string, knobs: SimKnobs): unknown {
  let text = '';
  for (let i = 0; i < knobs.outputTokens; i++) text += tokenText(i);
  return { id, object: 'text_completion', created: created(), model, choices: [{ index: 0, text, logprobs: null, finish_reason: 'length' }] };
}

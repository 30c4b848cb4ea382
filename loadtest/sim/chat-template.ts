/**
 * The simulated engine's own prompt rendering: what its tokenizer would see.
 * It is deliberately not the router's canonical bytes (router/scheduling's
 * prefix keys): a router that predicts the engine's cache from its own view
 * of the body must be measured against an engine that sees the body its own
 * way, as a real one does.
 *
 * Chat messages go through a ChatML-like template,
 * `<|im_start|>{role}\n{content}<|im_end|>\n`, with the tools rendered into
 * the system part (prepended as a system message when the request has none)
 * and the generation prompt `<|im_start|>assistant\n` at the end. An
 * assistant message's tool calls render by name and arguments only, so a
 * history resent by a client that kept the calls in another key order or
 * without ids renders to the same text the engine generated (the output
 * blocks of one turn are the prompt blocks of the next). A completion prompt
 * is rendered as-is.
 */

const GENERATION_PROMPT = '<|im_start|>assistant\n';

/** One tool call as the engine generated it or a client resent it; other fields are ignored. */
export interface ToolCallLike {
  readonly function?: { readonly name?: unknown; readonly arguments?: unknown };
}

/**
 * The text an engine's tokenizer would see for a chat or completion body:
 * `messages` (chat) or `prompt` (completions). Undefined when the body has
 * neither, e.g. an embeddings request.
 */
export function renderPrompt(payload: Readonly<Record<string, unknown>>): string | undefined {
  const messages = payload['messages'];
  if (Array.isArray(messages)) return renderChat(messages, payload['tools']);
  const prompt = payload['prompt'];
  if (typeof prompt === 'string') return prompt;
  // A batch of one prompt is common in SDKs; anything else (token ids, batches) as its JSON text.
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string') return prompt[0];
  return prompt === undefined ? undefined : JSON.stringify(prompt);
}

/** The text of assistant tool calls, exactly as {@link renderPrompt} renders them inside a resent history. */
export function renderToolCalls(calls: readonly ToolCallLike[]): string {
  let out = '';
  for (const call of calls) {
    const name = typeof call.function?.name === 'string' ? call.function.name : '';
    const args = call.function?.arguments;
    out += `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": ${typeof args === 'string' ? args : JSON.stringify(args ?? {})}}\n</tool_call>`;
  }
  return out;
}

function renderChat(messages: readonly unknown[], tools: unknown): string {
  let out = '';
  let first = 0;
  const toolsText = Array.isArray(tools) && tools.length > 0 ? `\n\n# Tools\n${tools.map((tool) => JSON.stringify(tool)).join('\n')}` : '';
  const head = messages[0] as Record<string, unknown> | undefined;
  if (toolsText !== '') {
    if (head?.['role'] === 'system') {
      out += `<|im_start|>system\n${contentText(head['content'])}${toolsText}<|im_end|>\n`;
      first = 1;
    } else {
      out += `<|im_start|>system\n${toolsText.slice(2)}<|im_end|>\n`;
    }
  }
  for (let i = first; i < messages.length; i++) {
    const message = messages[i];
    if (typeof message !== 'object' || message === null) continue;
    const m = message as Record<string, unknown>;
    const role = typeof m['role'] === 'string' ? m['role'] : 'user';
    const calls = Array.isArray(m['tool_calls']) ? renderToolCalls(m['tool_calls'] as ToolCallLike[]) : '';
    out += `<|im_start|>${role}\n${contentText(m['content'])}${calls}<|im_end|>\n`;
  }
  return out + GENERATION_PROMPT;
}

/** A message's content: a string, or the text parts of a content array (other parts as their JSON). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) return JSON.stringify(content);
  let out = '';
  for (const part of content) {
    const p = part as Record<string, unknown> | null;
    out += p !== null && typeof p === 'object' && typeof p['text'] === 'string' ? p['text'] : JSON.stringify(part);
  }
  return out;
}

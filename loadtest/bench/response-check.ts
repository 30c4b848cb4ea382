/**
 * Validates responses the way a strict OpenAI client would read them, so a
 * benchmark counts corruption instead of only status codes: bodies must
 * parse, SSE framing must hold, a stream must end with `[DONE]`, every
 * event must belong to the request that was sent (no interleaving), and
 * each tool call must reassemble into JSON arguments with a function name.
 *
 * The stream checker is fed chunks as they arrive and timestamps each event,
 * which is where time to first token and inter-token latency come from. Both
 * checkers also read the token counts an answer reports (`usage`, in a
 * stream's last chunk when the request asked with
 * `stream_options.include_usage`) and, when asked, keep the generated text a
 * multi-turn client resends as the assistant's turn.
 */

/** What was expected of one response. */
export interface Expectation {
  /** The request offered tools, so the answer must carry at least one tool call. */
  readonly toolCall: boolean;
  /**
   * The response `id` must end with this (the engine derives its ids from the
   * request id; a suffix, not a substring, so request 1 cannot pass for
   * request 12). Undefined skips the check, for peers that rewrite ids.
   */
  readonly idSuffix: string | undefined;
  /** Keep the generated text (content only), for a client that resends it as history. */
  readonly keepText?: boolean;
}

/** Token counts an answer reported in its `usage`. */
export interface ReportedUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** Timing and outcome of one checked stream. */
export interface StreamVerdict {
  /** Undefined when the stream is well-formed; otherwise the first problem found. */
  readonly problem: string | undefined;
  /** When the first event with generated content arrived (ms, `performance.now()`). */
  readonly firstTokenAt: number | undefined;
  /** Gaps between successive content events (ms). */
  readonly tokenGaps: number[];
  /** Content events seen. */
  readonly events: number;
  /** The last `usage` the stream carried, if any. */
  readonly usage: ReportedUsage | undefined;
  /** The generated text, when {@link Expectation.keepText} asked for it. */
  readonly text: string | undefined;
}

interface ToolCallParts {
  name: string;
  arguments: string;
}

const SEPARATOR = Buffer.from('\n\n');

/** Incremental checker for one `text/event-stream` chat or completion response. */
export class StreamCheck {
  readonly #expect: Expectation;
  #pending: Buffer = Buffer.alloc(0);
  #problem: string | undefined;
  #done = false;
  #events = 0;
  #firstTokenAt: number | undefined;
  #lastTokenAt: number | undefined;
  readonly #gaps: number[] = [];
  readonly #toolCalls = new Map<number, ToolCallParts>();
  #usage: ReportedUsage | undefined;
  #text: string | undefined;

  constructor(expect: Expectation) {
    this.#expect = expect;
    if (expect.keepText === true) this.#text = '';
  }

  /** Feeds the next body chunk, received at `now`. */
  push(chunk: Buffer, now: number): void {
    if (this.#problem !== undefined) return;
    let data = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    let end: number;
    while ((end = data.indexOf(SEPARATOR)) !== -1) {
      this.#event(data.subarray(0, end).toString('utf8'), now);
      data = data.subarray(end + SEPARATOR.length);
      if (this.#problem !== undefined) return;
    }
    this.#pending = data;
  }

  /** Call at the end of the body. */
  finish(): StreamVerdict {
    if (this.#problem === undefined) {
      if (this.#pending.toString('utf8').trim() !== '') this.#fail('stream ended inside an event');
      else if (!this.#done) this.#fail('stream ended without [DONE]');
      else if (this.#expect.toolCall && this.#toolCalls.size === 0) this.#fail('no tool call in a response to a request that offered tools');
      else for (const [index, call] of this.#toolCalls) this.#checkToolCall(index, call);
    }
    return { problem: this.#problem, firstTokenAt: this.#firstTokenAt, tokenGaps: this.#gaps, events: this.#events, usage: this.#usage, text: this.#text };
  }

  #fail(problem: string): void {
    this.#problem ??= problem;
  }

  #event(text: string, now: number): void {
    if (this.#done) return this.#fail('data after [DONE]');
    // Comment lines (": keep-alive") are legal SSE and carry no data.
    const lines = text.split('\n').filter((line) => !line.startsWith(':'));
    if (lines.length === 0) return;
    if (lines.length !== 1 || !lines[0]?.startsWith('data: ')) return this.#fail(`malformed SSE event: ${JSON.stringify(text.slice(0, 80))}`);
    const payload = lines[0].slice('data: '.length);
    if (payload === '[DONE]') {
      this.#done = true;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return this.#fail(`event is not JSON: ${JSON.stringify(payload.slice(0, 80))}`);
    }
    const event = parsed as { id?: unknown; error?: unknown; usage?: unknown; choices?: { delta?: { content?: unknown; tool_calls?: unknown }; text?: unknown }[] };
    if (event.error !== undefined) return this.#fail(`error event: ${JSON.stringify(event.error).slice(0, 120)}`);
    if (this.#expect.idSuffix !== undefined && (typeof event.id !== 'string' || !event.id.endsWith(this.#expect.idSuffix))) {
      return this.#fail(`event id ${JSON.stringify(event.id)} does not belong to request ${this.#expect.idSuffix} (interleaved)`);
    }
    this.#usage = reportedUsage(event.usage) ?? this.#usage;
    const choice = event.choices?.[0];
    if (choice === undefined) return;
    const delta = choice.delta;
    let content = typeof choice.text === 'string' && choice.text !== '';
    if (content && this.#text !== undefined) this.#text += choice.text as string;
    if (delta !== undefined) {
      if (typeof delta.content === 'string' && delta.content !== '') {
        content = true;
        if (this.#text !== undefined) this.#text += delta.content;
      }
      if (Array.isArray(delta.tool_calls)) {
        content = true;
        for (const part of delta.tool_calls as { index?: unknown; function?: { name?: unknown; arguments?: unknown } }[]) this.#toolCallPart(part);
      }
    }
    if (!content) return;
    this.#events++;
    if (this.#firstTokenAt === undefined) this.#firstTokenAt = now;
    else if (this.#lastTokenAt !== undefined) this.#gaps.push(now - this.#lastTokenAt);
    this.#lastTokenAt = now;
  }

  #toolCallPart(part: { index?: unknown; function?: { name?: unknown; arguments?: unknown } }): void {
    if (typeof part.index !== 'number') return this.#fail('tool call delta without an index');
    let call = this.#toolCalls.get(part.index);
    if (call === undefined) this.#toolCalls.set(part.index, (call = { name: '', arguments: '' }));
    if (typeof part.function?.name === 'string') call.name += part.function.name;
    if (typeof part.function?.arguments === 'string') call.arguments += part.function.arguments;
  }

  #checkToolCall(index: number, call: ToolCallParts): void {
    if (call.name === '') return this.#fail(`tool call ${index} has no function name`);
    try {
      JSON.parse(call.arguments);
    } catch {
      this.#fail(`tool call ${index} arguments do not parse as JSON (${call.arguments.length} characters)`);
    }
  }
}

/** The `usage` object's counts, when it has them. */
function reportedUsage(usage: unknown): ReportedUsage | undefined {
  const { prompt_tokens: promptTokens, completion_tokens: completionTokens } = (usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return typeof promptTokens === 'number' && typeof completionTokens === 'number' ? { promptTokens, completionTokens } : undefined;
}

/** What a non-streamed answer held, besides being well-formed or not. */
export interface JsonAnswer {
  /** Undefined when the body is well-formed; otherwise the first problem found. */
  readonly problem: string | undefined;
  readonly usage: ReportedUsage | undefined;
  /** The generated text (chat content or completion text; empty for tool calls). */
  readonly text: string;
}

/** Checks a non-streamed chat or completion body and reads its usage and text. */
export function readJsonResponse(body: string, expect: Expectation): JsonAnswer {
  let parsed: { id?: unknown; usage?: unknown; choices?: { message?: { content?: unknown; tool_calls?: { function?: { name?: unknown; arguments?: unknown } }[] }; text?: unknown }[] };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return { problem: `body is not JSON: ${JSON.stringify(body.slice(0, 80))}`, usage: undefined, text: '' };
  }
  const choice = parsed.choices?.[0];
  const content = choice?.message?.content ?? choice?.text;
  const answer = (problem: string | undefined): JsonAnswer => ({ problem, usage: reportedUsage(parsed.usage), text: typeof content === 'string' ? content : '' });
  if (expect.idSuffix !== undefined && (typeof parsed.id !== 'string' || !parsed.id.endsWith(expect.idSuffix))) {
    return answer(`response id ${JSON.stringify(parsed.id)} does not belong to request ${expect.idSuffix}`);
  }
  if (choice === undefined) return answer('response has no choices');
  if (!expect.toolCall) return answer(undefined);
  const calls = choice.message?.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return answer('no tool call in a response to a request that offered tools');
  for (const [index, call] of calls.entries()) {
    if (typeof call.function?.name !== 'string' || call.function.name === '') return answer(`tool call ${index} has no function name`);
    try {
      JSON.parse(String(call.function.arguments));
    } catch {
      return answer(`tool call ${index} arguments do not parse as JSON`);
    }
  }
  return answer(undefined);
}

/** Checks a non-streamed chat or completion body; returns the problem, or undefined when it is well-formed. */
export function checkJsonResponse(body: string, expect: Expectation): string | undefined {
  return readJsonResponse(body, expect).problem;
}

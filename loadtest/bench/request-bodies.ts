/**
 * The request bodies a generator sends. A plain template gets one body per
 * stream mode, built once and reused (the generator must stay cheaper than
 * what it measures). A token-shaped template ({@link RequestShape}) gets a
 * body per request: prompt and answer lengths drawn from their ranges,
 * `max_tokens`, vLLM's `ignore_eos` when asked, `stream_options` for the
 * usage chunk, and for conversations the session's history with the answers
 * it got.
 *
 * Token counts are approximate: there is no tokenizer, and a token is taken
 * as {@link CHARS_PER_TOKEN} characters of prompt text (English text averages
 * about that with BPE tokenizers).
 */
import { seededRng, type Rng } from '../sim/random.ts';
import type { RequestShape, RequestTemplate, TokenRange } from './load-spec.ts';

/** Characters of prompt text per token (approximate; no tokenizer). */
export const CHARS_PER_TOKEN = 4;

/** The tool offered when a template asks for tools (the shape OpenAI clients send). */
const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather for a place', parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] } },
};

/** A prompt of about `bytes` bytes of varied text (so nothing compresses or dedups it away). */
function prompt(bytes: number): string {
  if (bytes <= 64) return 'What is the weather in Zürich today?';
  const words = ['route', 'engine', 'cache', 'token', 'stream', 'queue', 'batch', 'prefix', 'load', 'shed'];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const word = `${words[(i * 7) % words.length] as string}${i % 97}`;
    parts.push(word);
    size += word.length + 1;
  }
  return parts.join(' ');
}

/** The request body for one (stream, template) pair of a plain template. */
function requestBody(template: RequestTemplate, stream: boolean): string {
  const content = prompt(template.promptBytes);
  const body: Record<string, unknown> = template.path.endsWith('/chat/completions')
    ? { model: template.model, stream, messages: [{ role: 'user', content }] }
    : { model: template.model, stream, prompt: content };
  if (template.tools) body['tools'] = [WEATHER_TOOL];
  return JSON.stringify(body);
}

interface Message {
  readonly role: 'user' | 'assistant';
  readonly content: string;
}

/** A session's conversation so far. `generation` counts restarts, so an answer to an abandoned conversation is dropped. */
interface Conversation {
  messages: readonly Message[];
  answered: number;
  generation: number;
}

/** The conversation turn a request was, handed back with its answer. */
export interface ConversationTurn {
  readonly session: number;
  readonly generation: number;
  /** Turns answered before this one. */
  readonly index: number;
  /** The messages sent, the new question last. */
  readonly sent: readonly Message[];
}

/** One request's body and what it asked for. */
export interface DraftedRequest {
  readonly body: string;
  /** The `max_tokens` asked for (shaped templates). */
  readonly maxTokens: number | undefined;
  /** Prompt tokens sent, history included, at {@link CHARS_PER_TOKEN} characters each (shaped templates). */
  readonly promptTokens: number | undefined;
  /** The conversation turn this request is (shaped templates with turns > 1 and a session). */
  readonly turn: ConversationTurn | undefined;
}

/** A uniform integer in `range`. */
function draw(range: TokenRange, random: Rng): number {
  return range.min + Math.floor(random() * (range.max - range.min + 1));
}

/** The bodies of one generator's requests; see the file header. */
export class RequestBodies {
  readonly #template: RequestTemplate;
  readonly #shape: RequestShape | undefined;
  readonly #fixed: Readonly<Record<'true' | 'false', string>> | undefined;
  readonly #random: Rng;
  /** Filler text as long as the longest prompt; each prompt is a unique first line and a slice of it. */
  readonly #filler: string;
  readonly #conversations = new Map<number, Conversation>();

  constructor(template: RequestTemplate, seed: number) {
    this.#template = template;
    this.#shape = template.shape;
    this.#fixed = this.#shape === undefined ? { true: requestBody(template, true), false: requestBody(template, false) } : undefined;
    // Its own stream of draws, so that shaping requests does not move the arrival times drawn from the seed.
    this.#random = seededRng(seed ^ 0x5eed);
    this.#filler = this.#shape === undefined ? '' : prompt(this.#shape.promptTokens.max * CHARS_PER_TOKEN);
  }

  /** True when answers must be kept: the next turn of a conversation resends them. */
  get keepsAnswers(): boolean {
    return (this.#shape?.turns ?? 1) > 1;
  }

  /** The body of request `requestId`, streamed or not, for `session` (undefined: none). */
  draft(requestId: string, stream: boolean, session: number | undefined): DraftedRequest {
    const shape = this.#shape;
    if (shape === undefined) return { body: (this.#fixed as Record<'true' | 'false', string>)[String(stream) as 'true' | 'false'], maxTokens: undefined, promptTokens: undefined, turn: undefined };
    const question: Message = { role: 'user', content: this.#question(requestId, draw(shape.promptTokens, this.#random)) };
    const conversation = shape.turns > 1 && session !== undefined ? this.#conversation(session) : undefined;
    const sent = conversation === undefined ? [question] : [...conversation.messages, question];
    const maxTokens = draw(shape.outputTokens, this.#random);
    const body: Record<string, unknown> = this.#template.path.endsWith('/chat/completions')
      ? { model: this.#template.model, stream, messages: sent }
      : { model: this.#template.model, stream, prompt: sent.map((m) => m.content).join('\n') };
    body['max_tokens'] = maxTokens;
    if (shape.ignoreEos) body['ignore_eos'] = true;
    if (stream) body['stream_options'] = { include_usage: true };
    if (this.#template.tools) body['tools'] = [WEATHER_TOOL];
    const chars = sent.reduce((n, m) => n + m.content.length, 0);
    const turn = conversation === undefined || session === undefined ? undefined : { session, generation: conversation.generation, index: conversation.answered, sent };
    return { body: JSON.stringify(body), maxTokens, promptTokens: Math.ceil(chars / CHARS_PER_TOKEN), turn };
  }

  /**
   * A conversation turn was answered with `reply`: the session's next turn
   * resends what this one sent plus the reply, or starts over after the last
   * turn. A session whose turns overlap (an open loop sends on schedule,
   * without waiting for the answer) keeps the history of the turn answered
   * last.
   */
  answered(turn: ConversationTurn, reply: string): void {
    const conversation = this.#conversation(turn.session);
    if (conversation.generation !== turn.generation) return;
    if (turn.index + 1 >= (this.#shape?.turns ?? 1)) {
      this.#conversations.set(turn.session, { messages: [], answered: 0, generation: conversation.generation + 1 });
      return;
    }
    conversation.messages = [...turn.sent, { role: 'assistant', content: reply }];
    conversation.answered = turn.index + 1;
  }

  #conversation(session: number): Conversation {
    let conversation = this.#conversations.get(session);
    if (conversation === undefined) this.#conversations.set(session, (conversation = { messages: [], answered: 0, generation: 0 }));
    return conversation;
  }

  /**
   * About `tokens` tokens of prompt text, opening with the request id: no two
   * prompts share a first block, so an engine's prefix cache cannot serve one
   * request's prompt from another's (a conversation's history still hits).
   */
  #question(requestId: string, tokens: number): string {
    const head = `Request ${requestId}. `;
    return head + this.#filler.slice(0, Math.max(0, tokens * CHARS_PER_TOKEN - head.length));
  }
}

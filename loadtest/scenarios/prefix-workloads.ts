/**
 * The four seeded traffic shapes of the prefix-affinity benchmark, as
 * conversations a client plays turn by turn. Every text is drawn from a
 * generator seeded by (run seed, workload, conversation index), so every
 * router in a run faces the same conversations arriving at the same times;
 * only the engines' replies, which the client reads and resends, depend on
 * the run (and the simulator's replies are deterministic too).
 *
 * Sizes are in tokens at ~4 bytes each, the simulator's pseudo-token and the
 * router's estimate alike. They are chosen so 8 engines on a 2-core machine
 * stay within what the machine can drive (see prefix-affinity.ts).
 *
 * - A, keyless multi-turn chat the way the OpenAI SDK sends it: a short
 *   system prompt every conversation shares, a long first message (a pasted
 *   document), short follow-ups; every turn resends the whole history with
 *   the previous assistant replies; no session header, no `user` field; the
 *   user thinks between turns.
 * - B, many users over a few long shared documents (llm-d's reference shape):
 *   one of 150 documents of ~6k tokens as the system message, a ~1.2k-token
 *   question of its own.
 * - C, one long system prompt for everyone (an agent's instructions) and a
 *   short question of its own.
 * - D, no reuse: every prompt its own text, of the size of A's turns.
 * - E, short prompts behind one short common prefix (a 200-token system
 *   prompt everyone sends, a 100-token question of its own): a cache can
 *   serve two thirds of each prompt, but prefill is a small part of a
 *   request's time, so spreading the batches is what matters; prefix
 *   affinity must cost nothing here.
 */
import { seededRng, type Rng } from '../sim/random.ts';

/** Workload names, in report order. */
export const WORKLOAD_NAMES = ['A', 'B', 'C', 'D', 'E'] as const;
/** One of {@link WORKLOAD_NAMES}. */
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];

/** One chat message as the client sends it. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/**
 * One conversation: `turns` requests, each asked after the previous one's
 * reply arrived and the user thought for `thinkMs(turn)`. The client owns the
 * history: it sends `opening` + for each earlier turn the user message and the
 * reply it read, then `userMessage(turn)`.
 */
export interface ConversationScript {
  /** Requests in this conversation (≥ 1). */
  readonly turns: number;
  /** Messages before the first user message (a system prompt), possibly none. */
  readonly opening: readonly ChatMessage[];
  /** The user message of `turn` (0-based, < turns). */
  userMessage(turn: number): string;
  /** Pause before `turn` (≥ 1) after the previous reply ended (ms, ≥ 0). */
  thinkMs(turn: number): number;
}

/** A traffic shape: how to make its conversations and what they cost. */
export interface Workload {
  readonly name: WorkloadName;
  /** One line for the report. */
  readonly description: string;
  /** Mean of `turns` over conversations, to turn a request rate into a conversation rate. */
  readonly meanTurns: number;
  /** Mean think time between turns (ms; 0 for one-turn workloads). */
  readonly meanThinkMs: number;
  /** Requests a warm-up needs before the engines' caches hold what a long-running fleet's would (B: every document twice). */
  readonly warmupRequests: number;
  /** Mean prompt size of one request (tokens), for the capacity estimate. */
  readonly meanPromptTokens: number;
  /** Conversation `index` (≥ 0) of this workload; the same (seed, index) always gives the same script. */
  conversation(index: number): ConversationScript;
}

/** Bytes per token, the simulator's and the router's estimate. */
export const BYTES_PER_TOKEN = 4;

/**
 * Workload A: keyless multi-turn chat. Long enough conversations that a
 * router which keeps each on one engine can reuse ~92% of the prompt tokens
 * (the first message and each new follow-up are all that is new), while one
 * that scatters turns over 8 engines finds about half (a Monte Carlo of
 * these sizes: least-load-like placement 0.52, perfect placement 0.92).
 */
const A = {
  systemTokens: 300,
  firstTokens: 800,
  followUpTokens: 60,
  minTurns: 8,
  maxTurns: 16,
  /** Mean think time between turns (ms); exponential, capped at 4× the mean. */
  thinkMeanMs: 1_000,
} as const;
/** Workload B: shared documents. */
const B = { documents: 150, documentTokens: 6_000, questionTokens: 1_200 } as const;
/** Workload C: one shared system prompt; 8k-24k in the design, 8k keeps the bytes per second the machine moves modest. */
const C = { systemTokens: 8_000, questionTokens: 200 } as const;
/** Workload D: about A's mean turn size, never reused. */
const D = { promptTokens: 1_800 } as const;
/** Workload E: a short common prefix, short questions. */
const E = { systemTokens: 200, questionTokens: 100 } as const;

/** A seed per (run seed, workload, index), so conversations do not depend on the order they are made in. */
function seedOf(seed: number, salt: number, index: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(salt + 1, 0xc2b2ae35) ^ Math.imul(index + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  return (h ^ (h >>> 15)) | 0;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * Word-salad text of about `tokens` tokens (tokens × 4 bytes, ASCII), drawn
 * from `random`: distinct for distinct generator states, so unrelated
 * prompts share no prefix beyond what a workload shares on purpose.
 */
export function text(random: Rng, tokens: number): string {
  const bytes = Math.max(1, Math.round(tokens * BYTES_PER_TOKEN));
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    const wordLength = 2 + Math.floor(random() * 7);
    let word = '';
    for (let i = 0; i < wordLength; i++) word += LETTERS[Math.floor(random() * LETTERS.length)] as string;
    parts.push(word);
    length += wordLength + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

/** An exponential draw with mean `mean`, capped at 4× the mean. */
function exponential(random: Rng, mean: number): number {
  return Math.min(4 * mean, -Math.log(1 - random()) * mean);
}

function workloadA(seed: number): Workload {
  const system = text(seededRng(seedOf(seed, 100, 0)), A.systemTokens);
  const meanTurns = (A.minTurns + A.maxTurns) / 2;
  return {
    name: 'A',
    description: `keyless multi-turn chat: a ${A.systemTokens}-token system prompt all share, a ${A.firstTokens}-token first message, ${A.followUpTokens}-token follow-ups, ${A.minTurns}-${A.maxTurns} turns (uniform), exponential think time (mean ${A.thinkMeanMs / 1000} s); every turn resends the whole history with the replies it read; no session header, no \`user\``,
    meanTurns,
    meanThinkMs: A.thinkMeanMs,
    warmupRequests: 0,
    // Each turn adds a follow-up and a reply of ~30 tokens to the history.
    meanPromptTokens: A.systemTokens + A.firstTokens + ((meanTurns - 1) / 2) * (A.followUpTokens + 30),
    conversation(index) {
      const random = seededRng(seedOf(seed, 0, index));
      const turns = A.minTurns + Math.floor(random() * (A.maxTurns - A.minTurns + 1));
      const first = text(random, A.firstTokens);
      const followUps = Array.from({ length: turns - 1 }, () => text(random, A.followUpTokens));
      const thinks = Array.from({ length: turns - 1 }, () => exponential(random, A.thinkMeanMs));
      return {
        turns,
        opening: [{ role: 'system', content: system }],
        userMessage: (turn) => (turn === 0 ? first : (followUps[turn - 1] as string)),
        thinkMs: (turn) => thinks[turn - 1] ?? 0,
      };
    },
  };
}

function workloadB(seed: number): Workload {
  // Made on first use and kept: 150 × 24 KB, shared by every conversation of the run.
  const documents: string[] = [];
  const documentOf = (d: number): string => (documents[d] ??= text(seededRng(seedOf(seed, 101, d)), B.documentTokens));
  return {
    name: 'B',
    description: `shared documents: one of ${B.documents} documents of ${B.documentTokens} tokens as the system message (the first ${B.documents} users one each, so the warm-up visits every document; then uniform), a ${B.questionTokens}-token question of its own; one request per user`,
    meanTurns: 1,
    meanThinkMs: 0,
    warmupRequests: 2 * B.documents,
    meanPromptTokens: B.documentTokens + B.questionTokens,
    conversation(index) {
      const random = seededRng(seedOf(seed, 1, index));
      const pick = Math.floor(random() * B.documents);
      const document = documentOf(index < B.documents ? index : pick);
      const question = text(random, B.questionTokens);
      return { turns: 1, opening: [{ role: 'system', content: document }], userMessage: () => question, thinkMs: () => 0 };
    },
  };
}

/** One system prompt everyone sends and a question of one's own, one request per user (C and E). */
function sharedSystemPrompt(name: 'C' | 'E', seed: number, sizes: { readonly systemTokens: number; readonly questionTokens: number }, salt: number, description: string): Workload {
  const system = text(seededRng(seedOf(seed, 100 + salt, 0)), sizes.systemTokens);
  return {
    name,
    description,
    meanTurns: 1,
    meanThinkMs: 0,
    warmupRequests: 0,
    meanPromptTokens: sizes.systemTokens + sizes.questionTokens,
    conversation(index) {
      const question = text(seededRng(seedOf(seed, salt, index)), sizes.questionTokens);
      return { turns: 1, opening: [{ role: 'system', content: system }], userMessage: () => question, thinkMs: () => 0 };
    },
  };
}

function workloadC(seed: number): Workload {
  return sharedSystemPrompt('C', seed, C, 2, `one ${C.systemTokens}-token system prompt for everyone, a ${C.questionTokens}-token question of its own; one request per user`);
}

function workloadD(seed: number): Workload {
  return {
    name: 'D',
    description: `no reuse: a ${D.promptTokens}-token prompt of its own, no system prompt; one request per user`,
    meanTurns: 1,
    meanThinkMs: 0,
    warmupRequests: 0,
    meanPromptTokens: D.promptTokens,
    conversation(index) {
      const prompt = text(seededRng(seedOf(seed, 3, index)), D.promptTokens);
      return { turns: 1, opening: [], userMessage: () => prompt, thinkMs: () => 0 };
    },
  };
}

function workloadE(seed: number): Workload {
  return sharedSystemPrompt('E', seed, E, 4, `short prompts behind a short common prefix: one ${E.systemTokens}-token system prompt for everyone, a ${E.questionTokens}-token question of its own; one request per user`);
}

/** The warm-up a row of `w` at `ratePerS` needs: at least `minMs`, and long enough for `w.warmupRequests` (ms). */
export function warmupMsFor(w: Workload, minMs: number, ratePerS: number): number {
  return Math.max(minMs, Math.ceil((w.warmupRequests / ratePerS) * 1000));
}

/** The workload `name` for run seed `seed`. */
export function workload(name: WorkloadName, seed: number): Workload {
  switch (name) {
    case 'A':
      return workloadA(seed);
    case 'B':
      return workloadB(seed);
    case 'C':
      return workloadC(seed);
    case 'D':
      return workloadD(seed);
    case 'E':
      return workloadE(seed);
  }
}

/**
 * Stand-ins for the replies of turns 0 … `turns` − 1 of a conversation that
 * was under way before the run began (its history was answered by engines
 * that are gone): text of a reply's size that no engine holds, so the first
 * request of such a conversation misses like a resumed one does.
 */
export function standInReplies(seed: number, index: number, turns: number, replyTokens: number): string[] {
  const random = seededRng(seedOf(seed, 9, index));
  return Array.from({ length: turns }, () => text(random, replyTokens));
}

/**
 * One request's messages: the opening, then every earlier turn's user
 * message and the reply read for it, then this turn's user message. Replies
 * must hold one entry per earlier turn.
 */
export function turnMessages(script: ConversationScript, turn: number, replies: readonly string[]): ChatMessage[] {
  const messages: ChatMessage[] = [...script.opening];
  for (let t = 0; t < turn; t++) messages.push({ role: 'user', content: script.userMessage(t) }, { role: 'assistant', content: replies[t] ?? '' });
  messages.push({ role: 'user', content: script.userMessage(turn) });
  return messages;
}

/**
 * The JSON body of one turn, as an OpenAI SDK sends a chat completion:
 * model, `stream: true`, `max_tokens`, the whole history; no `user` field.
 */
export function turnBody(model: string, maxTokens: number, script: ConversationScript, turn: number, replies: readonly string[]): string {
  return JSON.stringify({ model, stream: true, max_tokens: maxTokens, messages: turnMessages(script, turn, replies) });
}

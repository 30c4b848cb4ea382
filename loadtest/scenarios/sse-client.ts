/**
 * Sends one streaming chat request and times it the way a user feels it:
 * time to the first SSE `data:` event (TTFT), and whether the stream ended
 * with `[DONE]`. Never throws: a failure comes back as `error`.
 */
import type { Pool } from 'undici';

/** One streaming request to send. */
export interface ChatRequest {
  readonly model: string;
  /** Sent as `x-request-id`, so the engine that served it can be looked up. */
  readonly requestId: string;
  /** Sent as `x-session-id` when set. */
  readonly sessionKey: string | undefined;
  /** Conversation turn (≥ 1): the body carries that many earlier exchanges, as a real chat client resends its history. */
  readonly turn: number;
}

/** What happened to one request; times are `performance.now()` values (ms). */
export interface ChatOutcome {
  /** HTTP status, 0 when no response arrived. */
  readonly status: number;
  /** When the first `data:` event arrived; undefined when none did. */
  readonly firstDataAt: number | undefined;
  readonly endedAt: number;
  /** Undefined on success; otherwise a short description (status, missing [DONE], socket error). */
  readonly error: string | undefined;
  /** The router shed it as its contract says: 429 with a Retry-After header. */
  readonly shed: boolean;
}

const DATA = Buffer.from('data:');
const DONE = Buffer.from('data: [DONE]');

/** The chat body for `turn`: earlier turns as user/assistant pairs, then the new question. */
export function chatBody(model: string, turn: number): string {
  const messages: { role: string; content: string }[] = [];
  for (let i = 1; i < turn; i++) {
    messages.push({ role: 'user', content: `Question ${i}?` }, { role: 'assistant', content: `Answer ${i}.` });
  }
  messages.push({ role: 'user', content: `Question ${turn}?` });
  return JSON.stringify({ model, stream: true, messages });
}

/** Sends `request` on `pool` and reads the whole stream. */
export async function streamChat(pool: Pool, request: ChatRequest): Promise<ChatOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': request.requestId };
  if (request.sessionKey !== undefined) headers['x-session-id'] = request.sessionKey;
  let status = 0;
  let retryAfter: boolean;
  let firstDataAt: number | undefined;
  // The last bytes seen, enough to find `data:` or `[DONE]` split across chunks.
  let tail = Buffer.alloc(0);
  try {
    const response = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body: chatBody(request.model, request.turn) });
    status = response.statusCode;
    retryAfter = response.headers['retry-after'] !== undefined;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      const joined = Buffer.concat([tail, chunk]);
      if (firstDataAt === undefined && joined.includes(DATA)) firstDataAt = performance.now();
      tail = joined.subarray(-64);
    }
  } catch (err) {
    return { status, firstDataAt, endedAt: performance.now(), error: (err as Error).message, shed: false };
  }
  const endedAt = performance.now();
  if (status === 429) return { status, firstDataAt, endedAt, error: retryAfter ? 'status 429' : 'status 429 without Retry-After', shed: retryAfter };
  if (status !== 200) return { status, firstDataAt, endedAt, error: `status ${status}`, shed: false };
  if (!tail.includes(DONE)) return { status, firstDataAt, endedAt, error: 'stream ended without [DONE]', shed: false };
  return { status, firstDataAt, endedAt, error: undefined, shed: false };
}

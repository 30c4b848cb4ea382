/**
 * Sends one streamed chat turn the way an OpenAI SDK client does (the whole
 * history in the body, no session header, no `user` field) and reads the
 * assistant's reply back out of the SSE deltas, so the next turn can resend
 * it. Never throws: a failure comes back as `error`.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';

/** What happened to one turn; times are `performance.now()` values (ms). */
export interface TurnOutcome {
  /** HTTP status, 0 when no response arrived. */
  readonly status: number;
  /** When the first `data:` event arrived; undefined when none did. */
  readonly firstDataAt: number | undefined;
  readonly endedAt: number;
  /** Undefined on success; otherwise a short description (status, missing [DONE], socket error). */
  readonly error: string | undefined;
  /** Shed as the contract says: 429 (switchyard also sends Retry-After; peers may not). */
  readonly shed: boolean;
  /** The assistant's text, concatenated from `choices[0].delta.content` (empty unless it succeeded). */
  readonly reply: string;
}

/** The part of an undici Pool this needs. */
export type RequestSender = Pick<Dispatcher, 'request'>;

/**
 * POSTs `body` (a chat completion request with `stream: true`) to
 * `/v1/chat/completions` on `pool` with `x-request-id: requestId`, and reads
 * the whole stream; `signal` aborts it (counted as an error).
 */
export async function chatTurn(pool: RequestSender, body: string, requestId: string, signal?: AbortSignal): Promise<TurnOutcome> {
  let status = 0;
  let firstDataAt: number | undefined;
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let reply = '';
  let done = false;
  let malformed: string | undefined;
  const onEvent = (event: string) => {
    for (const line of event.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') {
        done = true;
        continue;
      }
      try {
        const chunk = JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[]; error?: unknown };
        if (chunk.error !== undefined) malformed ??= 'error event in the stream';
        const content = chunk.choices?.[0]?.delta?.content;
        if (typeof content === 'string') reply += content;
      } catch {
        malformed ??= 'unparsable SSE event';
      }
    }
  };
  try {
    const response = await pool.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body,
      ...(signal === undefined ? {} : { signal }),
    });
    status = response.statusCode;
    if (status !== 200) {
      await response.body.dump();
      return { status, firstDataAt, endedAt: performance.now(), error: `status ${status}`, shed: status === 429, reply: '' };
    }
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      pending += decoder.write(chunk);
      if (firstDataAt === undefined && pending.includes('data:')) firstDataAt = performance.now();
      let end: number;
      while ((end = pending.indexOf('\n\n')) !== -1) {
        onEvent(pending.slice(0, end));
        pending = pending.slice(end + 2);
      }
    }
    pending += decoder.end();
    if (pending.trim() !== '') onEvent(pending);
  } catch (err) {
    return { status, firstDataAt, endedAt: performance.now(), error: (err as Error).message, shed: false, reply: '' };
  }
  const endedAt = performance.now();
  const error = malformed ?? (done ? undefined : 'stream ended without [DONE]');
  return { status, firstDataAt, endedAt, error, shed: false, reply: error === undefined ? reply : '' };
}

/**
 * One request before the load: a target that cannot answer a single chat
 * completion (unreachable, wrong model, key refused, no engine ready) is a
 * bad target, told in one line before any step starts, not a report full of
 * identical errors. The answer also shows whether the target derives its
 * response ids from `x-request-id` (vLLM does, and switchyard passes them
 * through): only then can every response be checked to belong to its own
 * request.
 */
import { request } from 'undici';
import { redact } from './api-key.ts';
import { UsageError } from './options.ts';

/** Seconds the first answer may take: a cold engine can be slow, but not this slow. */
const PREFLIGHT_TIMEOUT_MS = 30_000;
const SHOWN_BODY_CHARS = 200;

/** What the preflight request showed. */
export interface Preflight {
  /** The answer's id ends with the request's `x-request-id`. */
  readonly derivesIds: boolean;
}

/** Why a request could not be sent, in words. */
function transportProblem(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (typeof code === 'string' && code.includes('TIMEOUT')) return `no answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s`;
  return (err as Error).message;
}

/**
 * Sends one short non-streamed chat completion to `origin` + `path`; throws a
 * {@link UsageError} unless it is answered 200. `secret` is removed from any
 * answer quoted in the error.
 */
export async function preflight(origin: string, path: string, model: string, headers: Readonly<Record<string, string>>, requestId: string, secret: string | undefined): Promise<Preflight> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 1, stream: false });
  let status: number;
  let text: string;
  try {
    const answer = await request(`${origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers, 'x-request-id': requestId },
      body,
      headersTimeout: PREFLIGHT_TIMEOUT_MS,
      bodyTimeout: PREFLIGHT_TIMEOUT_MS,
    });
    status = answer.statusCode;
    text = await answer.body.text();
  } catch (err) {
    throw new UsageError(`cannot reach ${origin}${path}: ${transportProblem(err)}`, { cause: err });
  }
  if (status !== 200) {
    const shown = redact(text.slice(0, SHOWN_BODY_CHARS).replace(/\s+/g, ' ').trim(), secret);
    throw new UsageError(`${origin}${path} answered ${status} to one chat completion for model ${JSON.stringify(model)}${shown === '' ? '' : `: ${shown}`}`);
  }
  let id: unknown;
  try {
    id = (JSON.parse(text) as { id?: unknown }).id;
  } catch {
    throw new UsageError(`${origin}${path} answered 200 with a body that is not JSON; is it an OpenAI-compatible API?`);
  }
  return { derivesIds: typeof id === 'string' && id.endsWith(requestId) };
}

/**
 * Reads the few facts routing needs (`model`, `stream`, `user`) from a
 * request body, and rejects bodies the engines must never see. The body is
 * only read, never re-encoded: the original bytes are what gets forwarded.
 */
import { isUtf8 } from 'node:buffer';
import { SwitchyardError } from '../errors/errors.ts';

/** Facts read from the body. */
export interface BodyFacts {
  /** `undefined` only for multipart bodies without a `model` field. */
  readonly model: string | undefined;
  readonly stream: boolean;
  /** The OpenAI `user` field, when a non-empty string. */
  readonly user: string | undefined;
}

/**
 * Parses a JSON request body.
 * @throws SwitchyardError (400) for invalid UTF-8, malformed JSON, nesting
 * deeper than `maxDepth`, a non-object body, or a missing/non-string `model`.
 */
export function jsonBodyFacts(body: Buffer, maxDepth: number): BodyFacts {
  if (!isUtf8(body)) throw new SwitchyardError('SWITCHYARD_INVALID_UTF8', 'The request body is not valid UTF-8.');
  const text = body.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SwitchyardError('SWITCHYARD_INVALID_JSON', 'The request body is not valid JSON.');
  }
  if (jsonDepth(text, maxDepth) > maxDepth) {
    throw new SwitchyardError('SWITCHYARD_NESTING_TOO_DEEP', `The request body is nested deeper than ${maxDepth} levels.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SwitchyardError('SWITCHYARD_INVALID_BODY', 'The request body must be a JSON object.');
  }
  const fields = parsed as { model?: unknown; stream?: unknown; user?: unknown };
  if (typeof fields.model !== 'string' || fields.model === '') {
    throw new SwitchyardError('SWITCHYARD_MISSING_MODEL', 'The request body must name a `model` as a non-empty string.', {
      param: 'model',
    });
  }
  return {
    model: fields.model,
    stream: fields.stream === true,
    user: typeof fields.user === 'string' && fields.user !== '' ? fields.user : undefined,
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Maximum nesting depth of already-validated JSON text, stopping early once
 * it passes `limit`. Skips over strings so brackets inside them don't count.
 */
export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return max;
}

function closingQuote(text: string, open: number): number {
  let i = text.indexOf('"', open + 1);
  while (i !== -1) {
    let backslashes = 0;
    for (let j = i - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return i;
    i = text.indexOf('"', i + 1);
  }
  return text.length;
}

/**
 * Reads the `model` field of a `multipart/form-data` body (audio
 * transcription uploads) without decoding the rest.
 * @throws SwitchyardError (400) when the content type has no boundary.
 */
export function multipartBodyFacts(body: Buffer, contentType: string): BodyFacts {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (boundary === undefined) {
    throw new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'The multipart request has no boundary.');
  }
  const delimiter = Buffer.from(`--${boundary}`);
  let model: string | undefined;
  let stream = false;
  for (let start = body.indexOf(delimiter); start !== -1; ) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const part = body.subarray(start + delimiter.length, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd !== -1) {
      const headers = part.subarray(0, headerEnd).toString('latin1');
      const name = /name="([^"]*)"/i.exec(headers)?.[1];
      const value = () => part.subarray(headerEnd + 4, part.length - 2).toString('utf8'); // drop the CRLF before the delimiter
      if (name === 'model') model = value();
      else if (name === 'stream') stream = value().trim() === 'true';
    }
    start = next;
  }
  return { model: model === '' ? undefined : model, stream, user: undefined };
}

/**
 * Reads the few facts routing needs (`model`, `stream`, `user`, the prompt
 * prefix) from a request body, and rejects bodies the engines must never
 * see. The body is only read, never re-encoded: the original bytes are what
 * gets forwarded (the one exception, a tenant's cache_salt appended, is
 * tenant-cache-salt.ts). JSON bodies are scanned as they arrive
 * ({@link JsonBodyScanner}); multipart bodies once complete, within a bound.
 */
import { SwitchyardError } from '../errors/errors.ts';
import { JsonBodyScanner, type JsonBodyFacts, type JsonScanLimits } from './json-body-scanner.ts';

/** Facts read from the body: a JSON body's (see JsonBodyFacts), or a multipart body's, whose `model` may be missing. */
export type BodyFacts = Omit<JsonBodyFacts, 'model'> & {
  /** `undefined` only for multipart bodies without a `model` field. */
  readonly model: string | undefined;
};

/**
 * Scans a complete JSON request body in one go (the listener scans as bytes
 * arrive; this is the same scan for a body already in memory).
 * @throws SwitchyardError (400) for invalid UTF-8, malformed JSON, nesting
 * deeper than `limits.maxDepth`, a non-object body, or a missing/non-string `model`.
 */
export function jsonBodyFacts(body: Buffer, limits: JsonScanLimits): BodyFacts {
  const scanner = new JsonBodyScanner(limits);
  scanner.push(body);
  return scanner.finish(body);
}

/** Most parts of a multipart body looked at; a real upload has a handful. */
export const MAX_MULTIPART_PARTS = 100;
/** Largest part header block read (bytes). */
const MAX_PART_HEADER_BYTES = 4_096;
/** Largest form field value read as text (bytes); the file part is never decoded. */
const MAX_FIELD_VALUE_BYTES = 4_096;

/**
 * Reads the `model` and `stream` fields of a `multipart/form-data` body
 * (audio transcription uploads) without decoding the rest. Delimiters count
 * only at the start of a line (RFC 2046 §5.1.1), and at most
 * {@link MAX_MULTIPART_PARTS} parts are looked at, so a tiny boundary
 * repeated through a 32 MiB body costs one bounded pass, not millions of parts.
 * @throws SwitchyardError (400) when the content type has no boundary or the body has too many parts.
 */
export function multipartBodyFacts(body: Buffer, contentType: string): BodyFacts {
  const match = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (boundary === undefined) {
    throw new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'The multipart request has no valid boundary.');
  }
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let model: string | undefined;
  let stream = false;
  // The first delimiter may open the body without the CRLF before it.
  let start = body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? -2 : body.indexOf(delimiter);
  for (let parts = 0; start !== -1; parts++) {
    const partStart = start + delimiter.length;
    const next = body.indexOf(delimiter, partStart);
    if (next === -1) break;
    if (parts === MAX_MULTIPART_PARTS) {
      throw new SwitchyardError('SWITCHYARD_BAD_REQUEST', `The multipart request has more than ${MAX_MULTIPART_PARTS} parts.`);
    }
    const field = formField(body.subarray(partStart, next));
    if (field?.name === 'model') model = field.value();
    else if (field?.name === 'stream') stream = field.value().trim() === 'true';
    start = next;
  }
  return {
    model: model === '' ? undefined : model,
    stream,
    user: undefined,
    cacheSalt: undefined,
    previousResponseId: undefined,
    promptPrefix: undefined,
    promptKind: undefined,
    promptTruncated: false,
  };
}

/** The name of one form part and a reader of its (bounded) text value. */
function formField(part: Buffer): { name: string | undefined; value: () => string } | undefined {
  const headerEnd = part.subarray(0, MAX_PART_HEADER_BYTES).indexOf('\r\n\r\n');
  if (headerEnd === -1) return undefined;
  const headers = part.subarray(0, headerEnd).toString('latin1');
  const name = /name="([^"]*)"/i.exec(headers)?.[1];
  return { name, value: () => part.subarray(headerEnd + 4, Math.min(part.length, headerEnd + 4 + MAX_FIELD_VALUE_BYTES)).toString('utf8') };
}

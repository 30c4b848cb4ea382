/**
 * Finds the response id in the first body bytes of a Responses API answer,
 * without copying or changing them: `{"id":"resp_…"` (non-streamed) or the
 * `response.created` event's `"response":{"id":"resp_…"` (streamed) both put
 * it in the first chunk an engine writes. An id split across chunks is
 * missed, which costs only the pin (the follow-up then goes wherever
 * scheduling sends it and the engine answers for an unknown id).
 */

/** Bytes of the first chunk searched. */
const SEARCH_BYTES = 4_096;
const ID_PATTERN = /"id"\s*:\s*"(resp_[A-Za-z0-9_-]{1,128})"/;

/** The first `resp_…` id in the start of `chunk`, if any. */
export function responseIdIn(chunk: Buffer): string | undefined {
  const text = chunk.toString('latin1', 0, Math.min(chunk.length, SEARCH_BYTES));
  return ID_PATTERN.exec(text)?.[1];
}

/**
 * Finds the response id at the start of a Responses API answer, without
 * copying or changing the bytes forwarded: `{"id":"resp_…"` (non-streamed)
 * or the `response.created` event's `"response":{"id":"resp_…"` (streamed)
 * both carry it within the first few hundred bytes. Engines usually write
 * them in one chunk, but TCP may cut anywhere, and an id split across
 * chunks cost the pin: the follow-up went wherever scheduling sent it and
 * the engine answered 404 for an id it never stored. So the search reads
 * chunks until the id shows or {@link SEARCH_BYTES} have passed.
 */

/** Bytes of an answer's start searched. */
const SEARCH_BYTES = 4_096;
const ID_PATTERN = /"id"\s*:\s*"(resp_[A-Za-z0-9_-]{1,128})"/;

/** The first `resp_…` id in the start of `chunk`, if any (one chunk alone). */
export function responseIdIn(chunk: Buffer): string | undefined {
  return ID_PATTERN.exec(chunk.toString('latin1', 0, Math.min(chunk.length, SEARCH_BYTES)))?.[1];
}

/** The search through one answer's first chunks. */
export class ResponseIdSearch {
  /** The start of the answer so far (latin1: one character per byte, so lengths are byte counts). */
  #seen = '';

  /**
   * Feeds the answer's next chunk: the id once found, `undefined` while
   * later chunks may still show it, `null` once {@link SEARCH_BYTES} passed
   * without it (stop feeding).
   */
  push(chunk: Buffer): string | null | undefined {
    this.#seen += chunk.toString('latin1', 0, Math.min(chunk.length, SEARCH_BYTES - this.#seen.length));
    // The pattern ends at the id's closing quote, so an id cut at the end of what was seen does not match short.
    const id = ID_PATTERN.exec(this.#seen)?.[1];
    if (id !== undefined) return id;
    return this.#seen.length >= SEARCH_BYTES ? null : undefined;
  }
}

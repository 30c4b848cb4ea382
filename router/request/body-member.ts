/**
 * The router's only rewrites of a request body (DESIGN.md says bytes in,
 * same bytes out): a tenant's `cache_salt` (tenant-cache-salt.ts) and a
 * rewritten `model` (model-rewrite.ts). Both append one member before the
 * closing `}` of a body the scanner already validated as a JSON object,
 * rather than re-encode it. A member of the same name the client sent stays
 * in place and the appended one follows it: JSON parsers keep the last
 * duplicate member (Python's `json`, which vLLM's server uses, and
 * `JSON.parse`).
 */

/**
 * `body` with `"<name>":<json>` appended as the object's last member. `body`
 * must be a JSON object (the body scanner has checked it); `json` an encoded
 * JSON value. Returns a new buffer; `body` is kept.
 * @throws Error when `body` does not end with `}` (whitespace aside): a
 *   caller bug, since only validated JSON objects reach here.
 */
export function withLastMember(body: Buffer, name: string, json: string): Buffer {
  let end = body.length - 1;
  while (end >= 0 && isJsonSpace(body[end] as number)) end--;
  if (end < 0 || body[end] !== 0x7d) throw new Error('withLastMember: the body is not a JSON object');
  let before = end - 1;
  while (before >= 0 && isJsonSpace(body[before] as number)) before--;
  const empty = body[before] === 0x7b;
  const member = Buffer.from(`${empty ? '' : ','}${JSON.stringify(name)}:${json}`, 'utf8');
  return Buffer.concat([body.subarray(0, end), member, body.subarray(end)]);
}

/** JSON's insignificant whitespace (RFC 8259 §2). */
function isJsonSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

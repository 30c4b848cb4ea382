/**
 * Finding where a JSON string token ends in JSON text already known to be
 * valid, fast: prompts are mostly long strings.
 *
 * A string up to {@link SHORT_STRING} bytes (keys, roles) is searched in JS;
 * past that, the native `indexOf` (memchr) takes over, which
 * costs ~50 ns a call but reads gigabytes a second where a JS byte loop
 * reads ~1.5 GB/s. A quote is a delimiter exactly when an even run of
 * backslashes (possibly none) precedes it.
 */

/** Strings at most this long are searched in JS; longer ones natively. */
export const SHORT_STRING = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Offset just past the quote that closes the string whose content starts at
 * `from` (just after its opening quote), or `text.length` when it does not
 * close within `text`: pass a subarray to bound the search.
 */
export function stringEnd(text: Buffer, from: number): number {
  const end = text.length;
  const quick = Math.min(end, from + SHORT_STRING);
  let j = from;
  let c = 0;
  while (j < quick && (c = text[j] as number) !== QUOTE && c !== BACKSLASH) j++;
  if (j < quick && c === QUOTE) return j + 1;
  for (;;) {
    j = text.indexOf(QUOTE, j);
    if (j === -1) return end;
    if (!escaped(text, j)) return j + 1;
    j++;
  }
}

/** The quote at `at` is preceded by an odd run of backslashes. */
function escaped(text: Buffer, at: number): boolean {
  let k = at - 1;
  while (k >= 0 && text[k] === BACKSLASH) k--;
  return ((at - k) & 1) === 0;
}

/**
 * Deterministic response content in vLLM's OpenAI-compatible shapes. Text
 * deliberately mixes ASCII with 2-, 3- and 4-byte UTF-8 characters, so byte
 * splits inside characters are exercised.
 */

const WORDS = ['hello', 'héllo', 'wörld', '日本語', 'token', '🚀', 'switch', 'yard', 'ñandú', 'data'];

/** Text of token `i` (each token is one word plus a space). */
export function tokenText(i: number): string {
  return `${WORDS[i % WORDS.length] as string} `;
}

/** Tool-call arguments: a JSON object text of at least `minBytes` UTF-8 bytes. */
export function toolArguments(minBytes: number, seed: number): string {
  const notes: string[] = [];
  let size = 64;
  for (let i = 0; size < minBytes; i++) {
    const word = WORDS[(i + seed) % WORDS.length] as string;
    notes.push(word);
    size += Buffer.byteLength(word) + 1;
  }
  return JSON.stringify({ location: 'Zürich, CH', unit: 'celsius', request: seed, notes: notes.join(' ') });
}

/** Splits `text` into `parts` pieces of similar length (tool-call argument fragments). */
export function fragments(text: string, parts: number): string[] {
  const out: string[] = [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** One SSE event line for a JSON payload. */
export function sseEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** The SSE terminator. */
export const SSE_DONE = 'data: [DONE]\n\n';

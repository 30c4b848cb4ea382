import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringEnd } from './json-strings.ts';

describe('JSON string bounds', () => {
  it('find the quote that closes a string token, past escaped quotes and backslash runs (property)', () => {
    const unit = fc.constantFrom('a', '"', '\\', '\\\\', '/', 'é', ' ');
    const text = fc.string({ unit, maxLength: 120 });
    fc.assert(
      fc.property(text, text, text, (before, value, after) => {
        const head = `[${JSON.stringify(before)},`;
        const token = JSON.stringify(value);
        const json = Buffer.from(`${head}${token},${JSON.stringify(after)}]`);
        const open = Buffer.byteLength(head);
        const close = open + Buffer.byteLength(token) - 1;
        assert.equal(stringEnd(json, open + 1), close + 1);
        // Cut before the closing quote, the string runs to the end of the text.
        assert.equal(stringEnd(json.subarray(0, close), open + 1), close);
      }),
      { numRuns: 2_000 },
    );
  });
});

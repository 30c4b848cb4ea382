import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compileStringRun, moduleSource } from './build.ts';
import { StringRuns } from './string-run.ts';

/** The byte loop the module replaces. */
function referenceRunEnd(chunk: Uint8Array, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const b = chunk[i] as number;
    if (b === 0x22 || b === 0x5c || b < 0x20) return i;
  }
  return to;
}

describe('string runs in WebAssembly', () => {
  it('end where the byte loop ends, for any bytes and bounds, across window boundaries (property)', () => {
    const runs = new StringRuns();
    // Mostly plain bytes, with a few that end a run, so runs are long and cross 16-byte steps and 64 KiB windows.
    const byte = fc.oneof({ weight: 30, arbitrary: fc.integer({ min: 0x20, max: 0xff }).filter((b) => b !== 0x22 && b !== 0x5c) }, { weight: 1, arbitrary: fc.constantFrom(0x22, 0x5c, 0x00, 0x09, 0x1f) });
    const chunk = fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.tuple(fc.array(byte, { maxLength: 64 }), fc.nat({ max: 140_000 }), fc.integer({ min: 0x20, max: 0x7e }).filter((b) => b !== 0x22 && b !== 0x5c)).map(([tail, size, fill]) => Uint8Array.from([...new Uint8Array(size).fill(fill), ...tail])));
    fc.assert(
      fc.property(chunk, fc.nat(), fc.nat(), fc.array(fc.nat(), { maxLength: 4 }), (bytes, a, b, starts) => {
        const to = bytes.length === 0 ? 0 : b % (bytes.length + 1);
        // Several calls on one chunk, as the scanner makes them: copied bytes are reused.
        for (const start of [a, ...starts]) {
          const from = to === 0 ? 0 : start % (to + 1);
          assert.equal(runs.runEnd(bytes, from, to), referenceRunEnd(bytes, from, to));
        }
        runs.release();
      }),
      { numRuns: 300 },
    );
  });

  it('never reads a released chunk again: the same buffer with new bytes is copied anew', () => {
    const runs = new StringRuns();
    const chunk = new Uint8Array(4_096).fill(0x61);
    assert.equal(runs.runEnd(chunk, 0, chunk.length), chunk.length);
    runs.release();
    chunk[3_000] = 0x22;
    assert.equal(runs.runEnd(chunk, 0, chunk.length), 3_000);
  });

  it('the committed module is what string-run.wat compiles to (run npm run wasm:build after editing it)', async () => {
    const committed = readFileSync(new URL('./string-run-module.ts', import.meta.url), 'utf8');
    assert.equal(committed, moduleSource(await compileStringRun()));
  });
});

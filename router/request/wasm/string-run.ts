/**
 * Where a run of plain JSON string bytes ends (the next quote, backslash or
 * control byte), sixteen bytes a step in WebAssembly SIMD (string-run.wat).
 *
 * Why: a 200 KB prompt is almost all string content, and the body scanner's
 * JavaScript byte loop spent ~1-3 ns on each of its bytes on the event loop
 * (with 64 large prompts arriving together, that queued every other request
 * behind them). The bytes are copied into the module's memory a window at a
 * time, once per window whatever the number of strings in it, so memory stays
 * bounded (one window) however large the chunk.
 *
 * One instance serves the process: calls are synchronous and never interleave.
 */
import { STRING_RUN_WASM } from './string-run-module.ts';

/** The parts of the WebAssembly API used here (the project's type libraries declare none). */
declare const WebAssembly: {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object) => { readonly exports: unknown };
};

/** Bytes copied into the module's memory at a time: one page. */
const WINDOW = 65_536;

/** Finds string-run ends in chunks; see {@link StringRuns.runEnd}. */
export class StringRuns {
  readonly #view: Uint8Array;
  readonly #runEnd: (from: number, to: number) => number;
  /** What the module's memory holds now: `#chunk` bytes from `#start`, `#length` of them. */
  #chunk: Uint8Array | undefined;
  #start = 0;
  #length = 0;

  constructor() {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(STRING_RUN_WASM, 'base64')));
    const exports = instance.exports as { memory: { buffer: ArrayBuffer }; runEnd: (from: number, to: number) => number };
    this.#view = new Uint8Array(exports.memory.buffer, 0, WINDOW);
    this.#runEnd = exports.runEnd;
  }

  /**
   * The index of the first byte of `chunk` in [`from`, `to`) that is `"`,
   * `\` or below 0x20, or `to` when there is none. Bytes already copied for
   * this chunk are reused until {@link release}.
   */
  runEnd(chunk: Uint8Array, from: number, to: number): number {
    while (from < to) {
      if (chunk !== this.#chunk || from < this.#start || from >= this.#start + this.#length) {
        this.#length = Math.min(WINDOW, chunk.length - from);
        this.#view.set(chunk.subarray(from, from + this.#length));
        this.#chunk = chunk;
        this.#start = from;
      }
      const end = Math.min(to, this.#start + this.#length);
      const at = this.#runEnd(from - this.#start, end - this.#start) + this.#start;
      if (at < end) return at;
      from = end;
    }
    return to;
  }

  /** Forgets the chunk copied last (its bytes may change once the caller is done with it). */
  release(): void {
    this.#chunk = undefined;
  }
}

/** The process's instance. */
export const stringRuns = new StringRuns();

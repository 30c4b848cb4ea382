/**
 * The bounded body scanner: validates a JSON request body while its bytes
 * arrive and yields the few facts the later stages need, building nothing.
 *
 * Why it exists: the router used to `JSON.parse` whole bodies (up to 32 MiB)
 * and check nesting depth afterwards. One deeply nested 32 MiB body cost
 * 4-7 s of main-thread CPU and ~600 MB of heap; three stalled the event loop
 * long enough for the kubelet to restart the pod. The rules that follow:
 * - Depth is checked at the bracket that breaks it, so a hostile body is
 *   refused after its first `maxDepth + 1` bytes, before the rest arrives.
 * - Cost is one pass over the bytes in chunk-sized slices (interleaved with
 *   other work on the loop), and memory is a fixed depth stack plus bounded
 *   captures: no object is built for the body, however large. Inside strings,
 *   the bulk of a prompt, the pass runs in WebAssembly SIMD for chunks of
 *   1 KiB and more (wasm/string-run.ts).
 * - Only top-level fields are read (`model`, `stream`, `user`, `cache_salt`,
 *   `previous_response_id`, and the raw prompt: `messages`, `prompt` or
 *   `input`); a duplicate key takes the last value, as `JSON.parse` and the
 *   engines' Python parsers do.
 * - Syntax is RFC 8259 exactly (strings, escapes, numbers, literals), so the
 *   engines never see a body the router called valid but is not. UTF-8 is
 *   checked once over the whole body at the end (native, fast).
 *
 * One file, past the 400-line limit on purpose (eslint.config.js names it as
 * the exception): the scanner is one state machine, and its states and the
 * transitions between them read best side by side, in the order the bytes
 * move through them; split into files, every transition would be followed
 * across an import.
 */
import { isUtf8 } from 'node:buffer';
import { SwitchyardError } from '../errors/errors.ts';
import { SHORT_STRING, stringEnd } from '../scheduling/json-strings.ts';
import { stringRuns } from './wasm/string-run.ts';
import type { PromptKind } from '../scheduling/prefix-keys.ts';

/** Limits of one scan. */
export interface JsonScanLimits {
  /** Deepest nesting of objects and arrays accepted (≥ 1). */
  readonly maxDepth: number;
  /** Bytes of canonical prompt prefix to keep (0: none). See {@link JsonBodyFacts.promptPrefix}. */
  readonly promptPrefixBytes: number;
  /**
   * Chunks of at least this many bytes find the ends of string runs in
   * WebAssembly (wasm/string-run.ts); smaller ones in a JavaScript loop,
   * which costs less than the call for a short body. Default
   * {@link NATIVE_RUNS_FROM}; tests set 0 or Infinity to pin either path.
   */
  readonly nativeRunsFrom?: number;
}

/** The chunk size (bytes) from which string runs are found in WebAssembly. */
export const NATIVE_RUNS_FROM = 1_024;

/** What routing reads from a JSON body. */
export interface JsonBodyFacts {
  readonly model: string;
  readonly stream: boolean;
  /** The OpenAI `user` field, when a non-empty string. */
  readonly user: string | undefined;
  /**
   * vLLM's `cache_salt`, when a non-empty string: requests with different
   * salts never share prefix-cache blocks, so prefix keys are seeded by it.
   */
  readonly cacheSalt: string | undefined;
  /** The Responses API `previous_response_id`, when a non-empty string. */
  readonly previousResponseId: string | undefined;
  /**
   * The first bytes (up to `promptPrefixBytes`) of the top-level `messages`
   * (chat), `prompt` (completions) or `input` (Responses) value as JSON text
   * without the whitespace outside strings: two requests whose prompts start
   * alike share this prefix whatever their field order or client formatting
   * elsewhere. Undefined when no such field is present or prefixes are off.
   * The buffer is the caller's (not shared with the body or other requests).
   */
  readonly promptPrefix: Buffer | undefined;
  /**
   * What the prompt is: `chat` for `messages` and for an `input` array (a
   * list of role-tagged items), `completion` for `prompt` and for any other
   * `input` (a string). Undefined when no prompt field is present. With
   * several prompt fields, the last one in the body counts.
   */
  readonly promptKind: PromptKind | undefined;
  /** True when the canonical prompt is longer than `promptPrefix` (cut at the cap). */
  readonly promptTruncated: boolean;
}

/** Longest `model` or `user` value accepted (bytes of JSON text). */
export const MAX_FIELD_BYTES = 4_096;

/** Container depths the scanner's stack holds before it first grows (a typed array this small stays on the JavaScript heap). */
const INITIAL_STACK = 16;

// Scanner states. Plain numbers: Node runs this file by stripping types, so no enums.
const VALUE = 0; // a value must start here
const VALUE_OR_CLOSE = 1; // just after '['
const KEY_OR_CLOSE = 2; // just after '{'
const KEY = 3; // after ',' in an object
const COLON = 4;
const AFTER_VALUE = 5; // ',' or a closing bracket
const END = 6; // only whitespace may follow
const STRING = 7;
const ESCAPE = 8;
const UNICODE = 9;
const MINUS = 10;
const ZERO = 11;
const INT = 12;
const DOT = 13;
const FRAC = 14;
const EXP = 15;
const EXP_SIGN = 16;
const EXP_DIGITS = 17;
const LITERAL = 18;

const OBJECT = 1;
const ARRAY = 2;

// Top-level fields the scanner records.
const OTHER = 0;
const MODEL = 1;
const STREAM = 2;
const USER = 3;
const PROMPT = 4; // `prompt`: a completion
const MESSAGES = 5; // `messages`: a chat
const INPUT = 6; // `input` (Responses): a chat when an array, else a completion
const CACHE_SALT = 7;
const PREVIOUS_RESPONSE_ID = 8;

const LITERALS = [Buffer.from('true'), Buffer.from('false'), Buffer.from('null')] as const;
const TRUE = 0;
const MAX_KEY_BYTES = 64; // longer keys are none of ours, even spelled with escapes

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** A byte range of the body, `end` exclusive. */
interface Span {
  start: number;
  end: number;
}

/**
 * Scans one JSON body. Feed chunks in order with {@link push}; {@link finish}
 * takes the whole body (the same bytes, concatenated) and returns the facts.
 * Both throw a {@link SwitchyardError} (400) as soon as the body is known to
 * be bad; after a throw the scanner must not be used again.
 */
export class JsonBodyScanner {
  readonly #limits: JsonScanLimits;
  readonly #nativeRunsFrom: number;
  /** Open containers by depth; grows with the body's nesting, up to `maxDepth + 1`. */
  #stack: Uint8Array;
  #depth = 0;
  #state = VALUE;
  /** Bytes pushed before the current chunk. */
  #offset = 0;
  #stringIsKey = false;
  #literal = 0;
  #literalIndex = 0;
  #unicodeLeft = 0;
  /** The top-level key being read: its first bytes, or undefined once too long. */
  #key: number[] | undefined;
  #keyHasEscape = false;
  /** The top-level field whose value comes next. */
  #field = OTHER;
  /** Where the value of the top-level field being read started. */
  #fieldStart = 0;
  #fieldIsString = false;
  #model: Span | null | undefined; // null: present but not a string
  #user: Span | undefined;
  #cacheSalt: Span | undefined;
  #previousResponseId: Span | undefined;
  #prompt: Span | undefined;
  #promptKind: PromptKind | undefined;
  #stream = false;

  constructor(limits: JsonScanLimits) {
    this.#limits = limits;
    this.#nativeRunsFrom = limits.nativeRunsFrom ?? NATIVE_RUNS_FROM;
    // Small at first: a typed array over 64 bytes lives outside the JavaScript heap, and allocating one
    // (129 bytes at the default depth limit) cost ~0.7 µs a request, where chat bodies nest 3-4 deep.
    this.#stack = new Uint8Array(Math.min(limits.maxDepth + 1, INITIAL_STACK));
  }

  /** Scans the next chunk of the body. @throws SwitchyardError (400) on bad syntax or depth. */
  push(chunk: Uint8Array): void {
    const native = chunk.length >= this.#nativeRunsFrom;
    try {
      this.#state = this.#scan(chunk, native);
    } finally {
      if (native) stringRuns.release();
    }
    this.#offset += chunk.length;
  }

  /** Scans `chunk` from the current state; returns the state after it. */
  #scan(chunk: Uint8Array, native: boolean): number {
    const n = chunk.length;
    let i = 0;
    let state = this.#state;
    while (i < n) {
      const c = chunk[i] as number;
      switch (state) {
        case STRING: {
          // The bulk of any prompt: run to the next quote, backslash or control byte.
          let j = i;
          let b = c;
          if (native) {
            j = stringRuns.runEnd(chunk, i, n);
            b = j < n ? (chunk[j] as number) : 0x22; // at the chunk's end b is never read as a byte of it
          } else {
            while (b !== 0x22 && b !== 0x5c && b >= 0x20) {
              if (++j === n) break;
              b = chunk[j] as number;
            }
          }
          // A top-level key is copied with its escapes, to be decoded when it ends.
          if (this.#key !== undefined && this.#stringIsKey) this.#keyBytes(chunk, i, b === 0x5c && j < n ? j + 1 : j);
          if (j === n) {
            i = n;
            continue;
          }
          if (b === 0x5c) {
            if (this.#stringIsKey) this.#keyHasEscape = true;
            state = ESCAPE;
          } else if (b === 0x22) {
            state = this.#endString(this.#offset + j);
          } else {
            throw invalidJson();
          }
          i = j + 1;
          continue;
        }
        case ESCAPE:
          if (this.#key !== undefined && this.#stringIsKey) this.#keyBytes(chunk, i, i + 1);
          if (c === 0x75) {
            this.#unicodeLeft = 4;
            state = UNICODE;
          } else if (c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) {
            state = STRING;
          } else {
            throw invalidJson();
          }
          break;
        case UNICODE:
          if (!isHex(c)) throw invalidJson();
          if (this.#key !== undefined && this.#stringIsKey) this.#keyBytes(chunk, i, i + 1);
          if (--this.#unicodeLeft === 0) state = STRING;
          break;
        case VALUE:
        case VALUE_OR_CLOSE:
          if (isWhitespace(c)) break;
          if (c === 0x5d && state === VALUE_OR_CLOSE) {
            state = this.#close(ARRAY, this.#offset + i + 1);
            break;
          }
          state = this.#startValue(c, this.#offset + i);
          break;
        case KEY_OR_CLOSE:
        case KEY:
          if (isWhitespace(c)) break;
          if (c === 0x7d && state === KEY_OR_CLOSE) {
            state = this.#close(OBJECT, this.#offset + i + 1);
            break;
          }
          if (c !== 0x22) throw invalidJson();
          this.#stringIsKey = true;
          this.#key = this.#depth === 1 ? [] : undefined;
          this.#keyHasEscape = false;
          state = STRING;
          break;
        case COLON:
          if (isWhitespace(c)) break;
          if (c !== 0x3a) throw invalidJson();
          state = VALUE;
          break;
        case AFTER_VALUE:
          if (isWhitespace(c)) break;
          if (c === 0x2c) {
            state = this.#stack[this.#depth] === OBJECT ? KEY : VALUE;
          } else if (c === 0x7d) {
            state = this.#close(OBJECT, this.#offset + i + 1);
          } else if (c === 0x5d) {
            state = this.#close(ARRAY, this.#offset + i + 1);
          } else {
            throw invalidJson();
          }
          break;
        case END:
          if (!isWhitespace(c)) throw invalidJson();
          break;
        case MINUS:
          if (c === 0x30) state = ZERO;
          else if (isDigit(c)) state = INT;
          else throw invalidJson();
          break;
        case DOT:
          if (!isDigit(c)) throw invalidJson();
          state = FRAC;
          break;
        case EXP:
          if (c === 0x2b || c === 0x2d) state = EXP_SIGN;
          else if (isDigit(c)) state = EXP_DIGITS;
          else throw invalidJson();
          break;
        case EXP_SIGN:
          if (!isDigit(c)) throw invalidJson();
          state = EXP_DIGITS;
          break;
        case ZERO:
        case INT:
        case FRAC:
        case EXP_DIGITS:
          if (isDigit(c) && state !== ZERO) break;
          if (c === 0x2e && (state === ZERO || state === INT)) {
            state = DOT;
            break;
          }
          if ((c === 0x65 || c === 0x45) && state !== EXP_DIGITS) {
            state = EXP;
            break;
          }
          if (isDigit(c)) throw invalidJson(); // a leading zero
          state = this.#endValue(this.#offset + i);
          continue; // this byte belongs to what follows the number
        case LITERAL: {
          const literal = LITERALS[this.#literal] as Buffer;
          if (c !== literal[this.#literalIndex]) throw invalidJson();
          if (++this.#literalIndex === literal.length) {
            if (this.#field === STREAM && this.#depth === 1) this.#stream = this.#literal === TRUE;
            state = this.#endValue(this.#offset + i + 1);
          }
          break;
        }
        default:
          throw new Error(`scanner in unknown state ${state}`);
      }
      i++;
    }
    return state;
  }

  /**
   * Ends the scan. `body` is every pushed byte, concatenated.
   * @throws SwitchyardError (400) for an incomplete or non-UTF-8 body, or a
   * missing, non-string, empty or oversized `model`.
   */
  finish(body: Buffer): JsonBodyFacts {
    if (!isUtf8(body)) throw new SwitchyardError('SWITCHYARD_INVALID_UTF8', 'The request body is not valid UTF-8.');
    if (this.#state !== END) throw invalidJson();
    const model = this.#model;
    if (model === undefined || model === null || model.end - model.start <= 2) {
      throw new SwitchyardError('SWITCHYARD_MISSING_MODEL', 'The request body must name a `model` as a non-empty string.', { param: 'model' });
    }
    if (model.end - model.start > MAX_FIELD_BYTES) {
      throw new SwitchyardError('SWITCHYARD_INVALID_BODY', `The \`model\` is longer than ${MAX_FIELD_BYTES} bytes.`, { param: 'model' });
    }
    const prefix = this.#prompt === undefined ? undefined : canonicalPrefix(body, this.#prompt, this.#limits.promptPrefixBytes);
    return {
      model: decodeString(body, model),
      stream: this.#stream,
      user: shortString(body, this.#user),
      cacheSalt: shortString(body, this.#cacheSalt),
      previousResponseId: shortString(body, this.#previousResponseId),
      promptPrefix: prefix?.bytes,
      promptKind: this.#promptKind,
      promptTruncated: prefix?.truncated ?? false,
    };
  }

  #startValue(c: number, at: number): number {
    if (this.#depth === 0 && c !== 0x7b) {
      if (c === 0x22 || c === 0x5b || c === 0x2d || isDigit(c) || c === 0x74 || c === 0x66 || c === 0x6e) {
        throw new SwitchyardError('SWITCHYARD_INVALID_BODY', 'The request body must be a JSON object.');
      }
      throw invalidJson();
    }
    if (this.#depth === 1) this.#startField(c, at);
    switch (c) {
      case 0x7b:
        this.#open(OBJECT);
        return KEY_OR_CLOSE;
      case 0x5b:
        this.#open(ARRAY);
        return VALUE_OR_CLOSE;
      case 0x22:
        this.#stringIsKey = false;
        return STRING;
      case 0x2d:
        return MINUS;
      case 0x30:
        return ZERO;
      case 0x74:
      case 0x66:
      case 0x6e:
        this.#literal = c === 0x74 ? 0 : c === 0x66 ? 1 : 2;
        this.#literalIndex = 1;
        return LITERAL;
      default:
        if (isDigit(c)) return INT;
        throw invalidJson();
    }
  }

  /** A value of the top-level object starts: note where, if it is one of ours. */
  #startField(c: number, at: number): void {
    this.#fieldStart = at;
    this.#fieldIsString = c === 0x22;
    switch (this.#field) {
      case MODEL:
        if (!this.#fieldIsString) this.#model = null;
        break;
      case STREAM:
        this.#stream = false;
        break;
      case USER:
        if (!this.#fieldIsString) this.#user = undefined;
        break;
      case CACHE_SALT:
        if (!this.#fieldIsString) this.#cacheSalt = undefined;
        break;
      case PREVIOUS_RESPONSE_ID:
        if (!this.#fieldIsString) this.#previousResponseId = undefined;
        break;
      case INPUT:
        // Known at its first byte: a list of items is a conversation, a string a plain prompt.
        if (c !== 0x5b) this.#field = PROMPT;
        break;
      case OTHER:
      case PROMPT:
      case MESSAGES:
        break;
    }
  }

  #open(kind: number): void {
    if (this.#depth === this.#limits.maxDepth) {
      throw new SwitchyardError('SWITCHYARD_NESTING_TOO_DEEP', `The request body is nested deeper than ${this.#limits.maxDepth} levels.`);
    }
    if (++this.#depth === this.#stack.length) this.#growStack();
    this.#stack[this.#depth] = kind;
  }

  #growStack(): void {
    const grown = new Uint8Array(Math.min(this.#stack.length * 2, this.#limits.maxDepth + 1));
    grown.set(this.#stack);
    this.#stack = grown;
  }

  /** Closes the innermost container with the bracket just before absolute offset `end`. */
  #close(kind: number, end: number): number {
    if (this.#stack[this.#depth] !== kind) throw invalidJson();
    this.#depth--;
    return this.#endValue(end);
  }

  /** A value ended just before absolute offset `end`. */
  #endValue(end: number): number {
    if (this.#depth === 1 && this.#field !== OTHER) this.#endField(end);
    if (this.#depth === 0) return END;
    return AFTER_VALUE;
  }

  #endField(end: number): void {
    const span = { start: this.#fieldStart, end };
    switch (this.#field) {
      case MODEL:
        if (this.#fieldIsString) this.#model = span;
        break;
      case USER:
        if (this.#fieldIsString) this.#user = span;
        break;
      case CACHE_SALT:
        if (this.#fieldIsString) this.#cacheSalt = span;
        break;
      case PREVIOUS_RESPONSE_ID:
        if (this.#fieldIsString) this.#previousResponseId = span;
        break;
      case PROMPT:
        this.#prompt = span;
        this.#promptKind = 'completion';
        break;
      case MESSAGES:
      case INPUT: // still INPUT here only when it was an array
        this.#prompt = span;
        this.#promptKind = 'chat';
        break;
      case STREAM:
      case OTHER:
        break;
    }
    this.#field = OTHER;
  }

  #endString(quoteAt: number): number {
    if (!this.#stringIsKey) return this.#endValue(quoteAt + 1);
    this.#stringIsKey = false;
    if (this.#depth === 1) this.#field = this.#keyField();
    return COLON;
  }

  #keyBytes(chunk: Uint8Array, from: number, to: number): void {
    const key = this.#key as number[];
    if (key.length + (to - from) > MAX_KEY_BYTES) {
      this.#key = undefined;
      return;
    }
    for (let k = from; k < to; k++) key.push(chunk[k] as number);
  }

  #keyField(): number {
    const bytes = this.#key;
    this.#key = undefined;
    if (bytes === undefined) return OTHER;
    // A key spelled with escapes ("mod\u0065l") is the same key to the engine's parser.
    // Byte for character, as latin1 decodes; ~10× cheaper than a Buffer made for it, for every top-level key.
    const raw = String.fromCharCode(...bytes);
    const name = this.#keyHasEscape ? (JSON.parse(`"${raw}"`) as string) : raw;
    switch (name) {
      case 'model':
        return MODEL;
      case 'stream':
        return STREAM;
      case 'user':
        return USER;
      case 'cache_salt':
        return CACHE_SALT;
      case 'previous_response_id':
        return PREVIOUS_RESPONSE_ID;
      case 'messages':
        return MESSAGES;
      case 'prompt':
        return PROMPT;
      case 'input':
        return INPUT;
      default:
        return OTHER;
    }
  }
}

function invalidJson(): SwitchyardError {
  return new SwitchyardError('SWITCHYARD_INVALID_JSON', 'The request body is not valid JSON.');
}

/** Decodes a validated JSON string token. */
function decodeString(body: Buffer, span: Span): string {
  return JSON.parse(body.toString('utf8', span.start, span.end)) as string;
}

/** A string field's value, when present, non-empty and at most {@link MAX_FIELD_BYTES} of JSON text. */
function shortString(body: Buffer, span: Span | undefined): string | undefined {
  if (span === undefined || span.end - span.start <= 2 || span.end - span.start > MAX_FIELD_BYTES) return undefined;
  return decodeString(body, span);
}

/** A canonical prompt prefix: see {@link JsonBodyFacts.promptPrefix}. */
export interface CanonicalPrefix {
  /** The canonical bytes, a buffer of their own (at most `maxBytes`). */
  readonly bytes: Buffer;
  /** True when the canonical value goes on past `bytes` (cut at `maxBytes`, or at the input bound). */
  readonly truncated: boolean;
}

/**
 * The value at `span` without whitespace outside strings, cut at `maxBytes`.
 * Reads at most 4 × `maxBytes` input bytes, so a value padded with whitespace
 * cannot make this cost more than the prefix is worth. Strings are copied
 * verbatim (escapes as sent): a client sends its history the same way every turn.
 */
export function canonicalPrefix(body: Buffer, span: Span, maxBytes: number): CanonicalPrefix | undefined {
  if (maxBytes === 0) return undefined;
  const stop = Math.min(span.end, span.start + 4 * maxBytes);
  // Sized to the value when it is short: small prompts come from the shared pool, not a 64 KiB allocation each.
  const out = Buffer.allocUnsafe(Math.min(maxBytes, stop - span.start));
  // The native quote search must not run past `stop` (a 32 MiB string would cost milliseconds).
  const window = body.subarray(0, stop);
  let length = 0;
  let i = span.start;
  while (i < stop && length < maxBytes) {
    const c = body[i] as number;
    if (c !== 0x22) {
      if (!isWhitespace(c)) out[length++] = c;
      i++;
      continue;
    }
    const end = stringEnd(window, i + 1);
    const n = Math.min(end - i, maxBytes - length);
    if (n > SHORT_STRING) {
      body.copy(out, length, i, i + n);
      length += n;
      i += n;
    } else {
      for (const last = i + n; i < last; ) out[length++] = body[i++] as number;
    }
  }
  // The value's last byte is never whitespace, so any byte left unread is canonical content.
  return { bytes: out.subarray(0, length), truncated: i < span.end };
}

/**
 * The head-sampling decision for a request span, made before any span
 * object exists: most requests are not sampled, and those cost only a
 * parse of the client's `traceparent` (when it sent one) and fresh ids for
 * the `traceparent` the engine gets with the sampled flag off, so that the
 * engine (vLLM samples parent-based) does not start traces of its own.
 *
 * Who may decide: a W3C `traceparent` from any client continues its trace
 * id, but only a trusted proxy's sampled flag and `tracestate` count. From
 * any other client the ratio decides, by a random draw rather than the
 * trace id's bits: a client picks its own trace id, and OpenTelemetry's
 * trace-id ratio samples some ids at any ratio (those whose words XOR to a
 * small number).
 */
import { randomFillSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parseTraceParent, TraceState } from '@opentelemetry/core';
import type { Config } from '../config/schema.ts';

/** The client's trace context, as far as the router honours it. */
export interface IncomingParent {
  readonly traceId: string;
  readonly spanId: string;
  /** The sampled flag; false from an untrusted client whatever it sent. */
  readonly sampled: boolean;
  /** Whether a trusted proxy sent it (its flag and tracestate count). */
  readonly trusted: boolean;
  /** `tracestate`, a trusted proxy's only, cut to the W3C limits (32 members, 512 characters). */
  readonly traceState: TraceState | undefined;
}

/**
 * The client's parent span: undefined without a valid `traceparent`
 * (several of them, joined by Node, are not valid).
 */
export function incomingParent(headers: IncomingHttpHeaders, trusted: boolean): IncomingParent | undefined {
  const header = headers.traceparent;
  if (typeof header !== 'string') return undefined;
  const parsed = parseTraceParent(header);
  if (parsed === null) return undefined;
  const state = headers.tracestate;
  return {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    sampled: trusted && (parsed.traceFlags & 1) === 1,
    trusted,
    traceState: trusted && typeof state === 'string' && state !== '' ? new TraceState(state) : undefined,
  };
}

/** The configured head sampler (`tracing.sampler`, `tracing.samplerArg`). */
export class HeadSampler {
  readonly #ratio: number;
  readonly #parentBased: boolean;
  readonly #random: () => number;

  constructor(config: Pick<Config['tracing'], 'sampler' | 'samplerArg'>, random: () => number) {
    this.#ratio = config.sampler.endsWith('always_on') ? 1 : config.sampler.endsWith('always_off') ? 0 : config.samplerArg;
    this.#parentBased = config.sampler.startsWith('parentbased_');
    this.#random = random;
  }

  /** Whether the request span is sampled: a trusted parent's flag for the parent-based samplers, else the ratio. */
  sampled(parent: IncomingParent | undefined): boolean {
    if (parent?.trusted === true && this.#parentBased) return parent.sampled;
    return this.#ratio >= 1 || (this.#ratio > 0 && this.#random() < this.#ratio);
  }
}

/** The all-zero ids, invalid (W3C), by byte length. */
const ZERO_IDS: Readonly<Record<number, string>> = { 8: '0'.repeat(16), 16: '0'.repeat(32) };

/** Random trace and span ids in lower-case hex, drawn from a pooled buffer (one system call per 256 ids). */
export class TraceIds {
  readonly #pool = Buffer.alloc(4_096);
  #used = this.#pool.length;

  traceId(): string {
    return this.#hex(16);
  }

  spanId(): string {
    return this.#hex(8);
  }

  #hex(bytes: number): string {
    if (this.#used + bytes > this.#pool.length) {
      randomFillSync(this.#pool);
      this.#used = 0;
    }
    const id = this.#pool.toString('hex', this.#used, (this.#used += bytes));
    // All zeros is an invalid id (W3C); one in 2^64 at worst, drawn again.
    return id === ZERO_IDS[bytes] ? this.#hex(bytes) : id;
  }
}

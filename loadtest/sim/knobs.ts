/**
 * Behaviour knobs of the engine simulator. Each can be set for the whole
 * process (CLI flags) and overridden per request with an `x-sim-<knob>`
 * header (kebab-case), so one simulator serves many test cases.
 */

/** All knobs; times in milliseconds. */
export interface SimKnobs {
  /** Max concurrently running sequences; extra requests wait (and show in num_requests_waiting). */
  maxSeqs: number;
  /** KV-cache usage (0-1) reported when every batch slot is busy; it scales with running sequences. */
  kvFullBatch: number;
  /** Time to first token once a request runs (ms). */
  ttftMs: number;
  /** Inter-token latency (ms). */
  itlMs: number;
  /**
   * Output tokens per response when it ends on its own (the model's end of
   * sequence): a request's `max_tokens` cuts it shorter, and with
   * `ignore_eos: true` sets it (loadtest/sim/token-budget.ts).
   */
  outputTokens: number;
  /** Tool-call argument size when the request offers tools (bytes). */
  toolArgsBytes: number;
  /** Tool calls in one answer when the request offers tools (≥ 1; several name the offered tools in turn). */
  toolCalls: number;
  /** Write response bytes in arbitrary splits (inside UTF-8 characters and SSE separators). */
  split: boolean;
  /** Share of requests answered 500 (0-1). */
  failRate: number;
  /** Destroy the connection after this many body writes (0: never). */
  dieAfterChunks: number;
  /** Accept requests and never answer them. */
  stall: boolean;
  /** Delay before sending response headers (ms). */
  slowHeadersMs: number;
  /** Destroy every connection as soon as it is accepted. */
  refuse: boolean;
  /** `/metrics` accepts the request and never answers. */
  metricsHang: boolean;
  /** `/metrics` answers 200 with a body that is not an exposition. */
  metricsGarbage: boolean;
  /**
   * KV blocks per engine (vLLM's num_gpu_blocks) for the prefix-cache model
   * (engine-kv.ts); 0 turns the model off and the engine behaves as it did
   * without it. Engine-wide: read once at start, `x-sim-kv-blocks` is ignored.
   */
  kvBlocks: number;
  /** Pseudo-tokens (4 bytes each) per KV block (vLLM's block_size). Engine-wide, like kvBlocks. */
  blockTokens: number;
  /** Prefill rate in prompt tokens per second, shared FIFO by the engine's requests; uncached tokens delay the first token by tokens ÷ rate. 0: off (only `ttftMs`). Needs kvBlocks > 0. */
  prefillTps: number;
  /**
   * LoRA adapter slots (vLLM's `--max-loras`) for the adapter model
   * (engine-lora.ts); 0 turns LoRA off: adapter names are unknown models and
   * no `vllm:lora_requests_info` is exported. Engine-wide, like kvBlocks.
   */
  loraSlots: number;
  /** Time to swap an adapter into a slot (ms); delays the first token of the request that swapped it in (and of any that start while it loads). Engine-wide. */
  loraLoadMs: number;
  /** Adapter names the engine serves next to its base model, comma-separated (vLLM's `--lora-modules`). Engine-wide; needs loraSlots > 0. */
  loraAdapters: string;
}

/** Defaults: a small, quick engine. */
export const DEFAULT_KNOBS: Readonly<SimKnobs> = Object.freeze({
  maxSeqs: 16,
  kvFullBatch: 0.7,
  ttftMs: 20,
  itlMs: 5,
  outputTokens: 16,
  toolArgsBytes: 1536,
  toolCalls: 1,
  split: false,
  failRate: 0,
  dieAfterChunks: 0,
  stall: false,
  slowHeadersMs: 0,
  refuse: false,
  metricsHang: false,
  metricsGarbage: false,
  kvBlocks: 0,
  blockTokens: 16,
  prefillTps: 0,
  loraSlots: 0,
  loraLoadMs: 200,
  loraAdapters: '',
});

const KEYS = Object.keys(DEFAULT_KNOBS) as (keyof SimKnobs)[];

/** `maxSeqs` → `max-seqs`. */
export function kebabKnob(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** A knob's value as a header or flag gives it; strings (lists) are taken as written. */
type KnobValue = number | boolean | string;

function parseValue(key: keyof SimKnobs, raw: string): KnobValue {
  if (typeof DEFAULT_KNOBS[key] === 'boolean') return raw === '' || raw === 'true' || raw === '1';
  if (typeof DEFAULT_KNOBS[key] === 'string') return raw;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${kebabKnob(key)}: expected a non-negative number, got ${JSON.stringify(raw)}`);
  return value;
}

/** Applies `x-sim-*` request headers on top of `base`. Unknown or bad values are ignored. */
export function knobsForRequest(base: Readonly<SimKnobs>, headers: Readonly<Record<string, string | string[] | undefined>>): SimKnobs {
  let out: SimKnobs | undefined;
  for (const key of KEYS) {
    const raw = headers[`x-sim-${kebabKnob(key)}`];
    if (typeof raw !== 'string') continue;
    try {
      out ??= { ...base };
      (out as unknown as Record<string, KnobValue>)[key] = parseValue(key, raw);
    } catch {
      // a test helper header with a bad value: keep the process default
    }
  }
  return out ?? (base);
}

/** Parses `--knob value` flags; returns the knobs and the flags it did not know. */
export function knobsFromFlags(argv: readonly string[]): { knobs: SimKnobs; rest: string[] } {
  const knobs: SimKnobs = { ...DEFAULT_KNOBS };
  const rest: string[] = [];
  const byFlag = new Map(KEYS.map((key) => [kebabKnob(key), key]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.startsWith('--') ? (arg.slice(2).split('=', 2) as [string, string | undefined]) : ['', undefined];
    const key = byFlag.get(flag);
    if (key === undefined) {
      rest.push(arg);
      continue;
    }
    let raw = inline;
    if (raw === undefined && typeof DEFAULT_KNOBS[key] !== 'boolean') raw = argv[++i];
    if (raw === undefined && typeof DEFAULT_KNOBS[key] !== 'boolean') throw new Error(`--${flag} needs a value`);
    (knobs as unknown as Record<string, KnobValue>)[key] = parseValue(key, raw ?? '');
  }
  return { knobs, rest };
}

/** Help lines for the knobs. */
export function knobsHelp(): string {
  return KEYS.map((key) => {
    const value = DEFAULT_KNOBS[key];
    const arg = typeof value === 'boolean' ? '' : typeof value === 'string' ? 'A,B ' : 'N ';
    return `  --${kebabKnob(key)} ${arg}(default ${value === '' ? 'none' : String(value)})`;
  }).join('\n');
}

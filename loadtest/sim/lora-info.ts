/**
 * vLLM's `vllm:lora_requests_info` gauge as prometheus_client serves it,
 * and the simulator's own LoRA counters.
 *
 * vLLM calls `set_to_current_time()` on the label set
 * `{max_lora, waiting_lora_adapters, running_lora_adapters}` as its state
 * moves, and prometheus_client never drops a label set: every combination
 * the engine has been through stays in the body with the time it was last
 * current, and only the one with the greatest value is the state now. The
 * lines keep the order in which each label set first appeared (as
 * prometheus_client's do), so a reader that takes the first or last line
 * instead of the greatest value is wrong here as it is against vLLM.
 */

/** Label sets kept; past it the oldest goes (vLLM keeps them all, but a long simulated run with many adapters would grow without bound). */
const SERIES_LIMIT = 1000;

/** The smallest step (s) between two settings, so that the latest is always strictly the greatest (Python's time.time() has µs resolution). */
const STEP_S = 1e-6;

/** One label set and the time it was last set (seconds since the epoch). */
export interface LoraInfoSeries {
  readonly running: string;
  readonly waiting: string;
  readonly seconds: number;
}

/** The label sets of `vllm:lora_requests_info`, in order of first appearance. */
export class LoraInfoGauge {
  readonly #series = new Map<string, LoraInfoSeries>();
  readonly #wallClock: () => number;
  #current = '';
  #last = 0;

  /**
   * Starts with the idle label set (no adapter running or waiting) set now.
   * `wallClock`: ms since the epoch, `performance.timeOrigin + performance.now()`
   * by default (sub-ms, like Python's time.time()).
   */
  constructor(wallClock: () => number = () => performance.timeOrigin + performance.now()) {
    this.#wallClock = wallClock;
    this.#stamp('', '');
  }

  /** Makes `running`/`waiting` (comma-joined adapter names) the current label set, at the current time, unless it already is. */
  set(running: string, waiting: string): void {
    if (`${running}\n${waiting}` !== this.#current) this.#stamp(running, waiting);
  }

  #stamp(running: string, waiting: string): void {
    const key = `${running}\n${waiting}`;
    this.#current = key;
    this.#last = Math.max(this.#wallClock() / 1000, this.#last + STEP_S);
    // Set in place: a label set seen before keeps its line, with a new value.
    this.#series.set(key, { running, waiting, seconds: this.#last });
    if (this.#series.size > SERIES_LIMIT) this.#series.delete(this.#oldest());
  }

  /** Every label set kept, in order of first appearance (not of time). */
  get series(): readonly LoraInfoSeries[] {
    return [...this.#series.values()];
  }

  /** The current label set: the one set last (greatest value). */
  get current(): LoraInfoSeries {
    return this.#series.get(this.#current) as LoraInfoSeries;
  }

  #oldest(): string {
    let oldest: [string, number] = ['', Infinity];
    for (const [key, s] of this.#series) if (s.seconds < oldest[1]) oldest = [key, s.seconds];
    return oldest[0];
  }
}

/** The LoRA state `/metrics` renders (vLLM dialect only). */
export interface LoraGauges {
  /** vLLM's max_loras: the adapter slots. */
  readonly maxLora: number;
  readonly info: readonly LoraInfoSeries[];
  /** Adapters swapped in since start. */
  readonly swaps: number;
  /** Requests started per served adapter since start (every served adapter listed, 0 included). */
  readonly requests: ReadonlyMap<string, number>;
}

/** The exposition lines of the LoRA metrics. */
export function renderLoraMetrics(g: LoraGauges): string[] {
  const lines = ['# HELP vllm:lora_requests_info Running stats on lora requests.', '# TYPE vllm:lora_requests_info gauge'];
  // prometheus_client writes labels in labelnames order, which vLLM declares as max_lora, waiting, running.
  for (const s of g.info) {
    lines.push(`vllm:lora_requests_info{max_lora="${g.maxLora}",waiting_lora_adapters="${escapeLabel(s.waiting)}",running_lora_adapters="${escapeLabel(s.running)}"} ${goFloat(s.seconds)}`);
  }
  lines.push('# HELP sim:lora_swaps_total LoRA adapters swapped into a slot since start (simulator only).', '# TYPE sim:lora_swaps_total counter', `sim:lora_swaps_total ${goFloat(g.swaps)}`);
  lines.push('# HELP sim:lora_requests_total Requests started per LoRA adapter since start (simulator only).', '# TYPE sim:lora_requests_total counter');
  for (const [adapter, count] of g.requests) lines.push(`sim:lora_requests_total{adapter="${escapeLabel(adapter)}"} ${goFloat(count)}`);
  return lines;
}

/**
 * A sample value as prometheus_client writes it (`floatToGoString`):
 * Python's repr, switched to an exponent past six integer digits as Go
 * does, so a timestamp reads `1.7886264546318772e+09` and a count `3.0`.
 */
export function goFloat(value: number): string {
  let s = String(value);
  if (Number.isInteger(value) && !s.includes('e')) s = `${s}.0`;
  const dot = s.indexOf('.');
  if (value > 0 && dot > 6) return `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, '') + `e+0${dot - 1}`;
  return s;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

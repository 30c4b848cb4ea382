/**
 * The LoRA adapters of one simulated engine (knob `loraSlots` > 0), in
 * vLLM's shape: a request names an adapter in its `model` field; at most
 * `loraSlots` adapters are active at once (lora-slots.ts); a request whose
 * adapter cannot become active waits, skipped by the scheduler so it does not
 * block requests behind it (scheduler.ts); swapping an adapter in delays
 * that request's first token by `loraLoadMs`. Requests for the base model
 * need no adapter slot.
 *
 * It also keeps what vLLM reports of that state: the adapters of running and
 * of waiting requests in `vllm:lora_requests_info` (lora-info.ts), set at
 * each change, plus the simulator's swap and per-adapter request counters.
 */
import { LoraInfoGauge, type LoraGauges } from './lora-info.ts';
import { LoraSlots } from './lora-slots.ts';
import type { Admission } from './scheduler.ts';

/** Settings of one engine's adapters. */
export interface EngineLoraOptions {
  /** The base model id (what `/v1/models` names as each adapter's parent). */
  readonly model: string;
  /** Adapter slots, vLLM's max_loras (≥ 1). */
  readonly slots: number;
  /** Time to swap an adapter in (ms). */
  readonly loadMs: number;
  /** Adapter names served, comma-separated; blanks, duplicates and the base model's own name are dropped. */
  readonly adapters: string;
  /** Monotonic clock (ms) of adapter loads; `performance.now` by default. */
  readonly clock?: () => number;
  /** Wall clock (ms since the epoch) of the info gauge's values. */
  readonly wallClock?: () => number;
}

/** A request's claim on an adapter slot, given to the scheduler's `acquire` and `release`. */
export interface LoraAdmission extends Admission {
  readonly adapter: string;
  /** Delay before the adapter's weights are loaded (ms), known once the request started; it comes before the first token. */
  readonly loadMs: number;
}

/** One `/v1/models` entry, as vLLM's ModelCard. */
export interface ModelCard {
  readonly id: string;
  readonly object: 'model';
  readonly created: number;
  readonly owned_by: 'vllm';
  readonly root: string;
  readonly parent: string | null;
  readonly max_model_len: number | null;
}

/** The adapters, their slots, and the counters and gauge that report them. */
export class EngineLora {
  readonly model: string;
  /** Served adapter names, in the order given. */
  readonly adapters: readonly string[];
  readonly slots: LoraSlots;
  readonly info: LoraInfoGauge;
  /** Requests per adapter now running, and now waiting; Maps keep first-arrival order, which the gauge's lists follow, as vLLM's dicts do. */
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, number>();
  readonly #started = new Map<string, number>();

  constructor(options: EngineLoraOptions) {
    this.model = options.model;
    const names = options.adapters.split(',').map((name) => name.trim());
    this.adapters = [...new Set(names.filter((name) => name !== '' && name !== options.model))];
    for (const adapter of this.adapters) this.#started.set(adapter, 0);
    this.slots = new LoraSlots({ capacity: options.slots, loadMs: options.loadMs, ...(options.clock === undefined ? {} : { clock: options.clock }) });
    this.info = new LoraInfoGauge(options.wallClock);
  }

  /** Whether `model` names a served adapter. */
  serves(model: unknown): model is string {
    return typeof model === 'string' && this.#started.has(model);
  }

  /** The admission of a request for `model`; undefined when it needs no adapter slot (the base model, or a body without a served adapter). */
  admission(model: unknown): LoraAdmission | undefined {
    if (!this.serves(model)) return undefined;
    const adapter = model;
    let loadMs = 0;
    let waiting = false;
    return {
      adapter,
      get loadMs() {
        return loadMs;
      },
      ready: () => this.slots.canStart(adapter),
      queued: () => {
        waiting = true;
        this.#move(adapter, undefined, this.#waiting);
      },
      started: () => {
        loadMs = this.slots.start(adapter);
        this.#started.set(adapter, (this.#started.get(adapter) ?? 0) + 1);
        this.#move(adapter, waiting ? this.#waiting : undefined, this.#running);
        waiting = false;
      },
      ended: (ran) => {
        if (ran) this.slots.finish(adapter);
        this.#move(adapter, ran ? this.#running : this.#waiting, undefined);
      },
    };
  }

  /** The adapters' `/v1/models` entries: `parent` is the base model, `root` the adapter's (made-up) path. */
  modelCards(): ModelCard[] {
    return this.adapters.map((id) => ({ id, object: 'model', created: 0, owned_by: 'vllm', root: `/adapters/${id}`, parent: this.model, max_model_len: null }));
  }

  /** What `/metrics` renders. */
  gauges(): LoraGauges {
    return { maxLora: this.slots.capacity, info: this.info.series, swaps: this.slots.swaps, requests: this.#started };
  }

  /** Moves one request of `adapter` between the running and waiting tallies, then reports the new state. */
  #move(adapter: string, from: Map<string, number> | undefined, to: Map<string, number> | undefined): void {
    if (from !== undefined) {
      const left = (from.get(adapter) ?? 0) - 1;
      if (left > 0) from.set(adapter, left);
      else from.delete(adapter);
    }
    to?.set(adapter, (to.get(adapter) ?? 0) + 1);
    this.#report();
  }

  #report(): void {
    this.info.set([...this.#running.keys()].join(','), [...this.#waiting.keys()].join(','));
  }
}

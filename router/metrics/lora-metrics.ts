/**
 * LoRA metrics: per engine, what its `vllm:lora_requests_info` gauge showed
 * at the router's last scrape (adapters running, adapters waiting for a slot,
 * slots, adapters seen starting), and per adapter and engine, the requests
 * the router sent there. The per-engine series are read from the load view
 * at scrape time, like the other backend gauges; the request counter follows
 * the endpoint's lifetime (see metrics.ts).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { EndpointAttributes } from '../load/endpoint-attributes.ts';
import { LORA_REQUESTS_INFO, type LoraRequestsInfo } from '../load/extractors/lora-requests-info.ts';
import type { MetricBackend } from './metrics.ts';

/** An endpoint as the LoRA gauges read it. */
export interface LoraBackend {
  readonly id: string;
  readonly attributes?: EndpointAttributes | undefined;
}

const ENGINE_GAUGES: readonly { readonly name: string; readonly help: string; readonly value: (info: LoraRequestsInfo) => number }[] = [
  { name: 'switchyard_backend_lora_running_adapters', help: "Adapters with requests running on the engine (vllm:lora_requests_info's running_lora_adapters at the last successful scrape).", value: (info) => info.running.length },
  {
    name: 'switchyard_backend_lora_waiting_adapters',
    help: 'Adapters with requests waiting on the engine that it is not running: they wait for an adapter slot (swap pressure; the LoRA walk avoids such engines).',
    value: (info) => info.waiting.filter((adapter) => !info.running.includes(adapter)).length,
  },
  { name: 'switchyard_backend_lora_max_adapters', help: "Adapters the engine can run at once (vLLM's max_lora, --max-loras).", value: (info) => info.maxLora },
];

/** The LoRA series of one router; `backends` is read at every scrape. */
export class LoraMetrics {
  readonly #requests: Counter<'backend' | 'adapter'>;
  /** Adapters counted per backend id, so a departed endpoint's series can all be removed. */
  readonly #adapters = new Map<string, Set<string>>();

  constructor(registers: Registry[], backends: () => Iterable<LoraBackend>) {
    const infos = function* () {
      for (const backend of backends()) {
        const info = backend.attributes?.get(LORA_REQUESTS_INFO);
        if (info !== undefined) yield [backend.id, info] as const;
      }
    };
    for (const spec of ENGINE_GAUGES) {
      new Gauge({
        name: spec.name,
        help: spec.help,
        labelNames: ['backend'],
        registers,
        collect() {
          this.reset();
          for (const [backend, info] of infos()) this.set({ backend }, spec.value(info));
        },
      });
    }
    new Counter({
      name: 'switchyard_backend_lora_adapter_starts_total',
      help: "Adapters seen starting to run on the engine: in vllm:lora_requests_info's running list at a scrape and not at the scrape before. Each is a swap-in, or a loaded adapter resuming after an idle spell: an upper bound of adapter swaps, which vLLM does not count.",
      labelNames: ['backend'],
      registers,
      collect() {
        // The count lives with the endpoint's state; it restarts (a counter reset) when the state does.
        this.reset();
        for (const [backend, info] of infos()) this.inc({ backend }, info.starts);
      },
    });
    this.#requests = new Counter({
      name: 'switchyard_lora_requests_total',
      help: 'Requests for a LoRA adapter (a model an engine lists with a parent) by the engine the router first sent them to.',
      labelNames: ['backend', 'adapter'],
      registers,
    });
  }

  /** Counts a request for `adapter` sent to `backend`; dropped once it has left the set. */
  countRequest(backend: MetricBackend, adapter: string): void {
    if (!backend.present) return;
    this.#requests.labels(backend.id, adapter).inc();
    let adapters = this.#adapters.get(backend.id);
    if (adapters === undefined) this.#adapters.set(backend.id, (adapters = new Set()));
    adapters.add(adapter);
  }

  /** Removes the request series of an endpoint that left the set. */
  forgetBackend(id: string): void {
    for (const adapter of this.#adapters.get(id) ?? []) this.#requests.remove({ backend: id, adapter });
    this.#adapters.delete(id);
  }
}

/**
 * LoRA counters: per engine, the adapters seen starting to run between the
 * router's scrapes of its `vllm:lora_requests_info` (read from the load view
 * at scrape time; the gauges of that state are in backend-gauges.ts), and
 * per adapter and engine, the requests the router sent there (following the
 * endpoint's lifetime, see metrics.ts).
 */
import { Counter, type Registry } from 'prom-client';
import { LORA_REQUESTS_INFO } from '../load/extractors/lora-requests-info.ts';
import type { BackendGauges } from './backend-gauges.ts';
import type { MetricBackend } from './metrics.ts';

/** The LoRA counters of one router; `backends` is read at every scrape. */
export class LoraMetrics {
  readonly #requests: Counter<'backend' | 'adapter'>;
  /** Adapters counted per backend id, so a departed endpoint's series can all be removed. */
  readonly #adapters = new Map<string, Set<string>>();

  constructor(registers: Registry[], backends: () => Iterable<Pick<BackendGauges, 'id' | 'attributes'>>) {
    new Counter({
      name: 'switchyard_backend_lora_adapter_starts_total',
      help: "Adapters seen starting to run on the engine: in vllm:lora_requests_info's running list at a scrape and not at the scrape before. Each is a swap-in, or a loaded adapter resuming after an idle spell: an upper bound of adapter swaps, which vLLM does not count.",
      labelNames: ['backend'],
      registers,
      collect() {
        // The count lives with the endpoint's state; it restarts (a counter reset) when the state does.
        this.reset();
        for (const backend of backends()) {
          const info = backend.attributes?.get(LORA_REQUESTS_INFO);
          if (info !== undefined) this.inc({ backend: backend.id }, info.starts);
        }
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

/**
 * Runs several endpoint sources at once (e.g. pods in two namespaces plus a
 * static list) and merges their sets into one. The first merged set is
 * emitted only once every source has produced its first set, so readiness
 * waits for all of them; after that, every change of any source emits a new
 * merged set. An id claimed by two sources is kept once, from the source
 * listed first.
 */
import type { Endpoint, EndpointSet, EndpointSetListener, EndpointSource } from './endpoint.ts';

/** Told about an endpoint id that two sources both produced; must not throw. */
export type DuplicateListener = (id: string) => void;

/** The merge of several {@link EndpointSource}s. */
export class UnionEndpointSource implements EndpointSource {
  readonly #sources: readonly EndpointSource[];
  readonly #latest: (EndpointSet | undefined)[];
  readonly #onDuplicate: DuplicateListener | undefined;
  readonly #reported = new Set<string>();
  #listener: EndpointSetListener | undefined;
  #version = 0;

  constructor(sources: readonly EndpointSource[], onDuplicate?: DuplicateListener) {
    if (sources.length === 0) throw new Error('a union needs at least one source');
    this.#sources = sources;
    this.#latest = sources.map(() => undefined);
    this.#onDuplicate = onDuplicate;
  }

  start(listener: EndpointSetListener): void {
    this.#listener = listener;
    this.#sources.forEach((source, index) =>
      source.start((set) => {
        this.#latest[index] = set;
        this.#emit();
      }),
    );
  }

  async stop(): Promise<void> {
    this.#listener = undefined;
    await Promise.all(this.#sources.map((source) => source.stop()));
  }

  #emit(): void {
    if (this.#listener === undefined || this.#latest.some((set) => set === undefined)) return;
    const byId = new Map<string, Endpoint>();
    for (const set of this.#latest) {
      for (const endpoint of set?.endpoints ?? []) {
        if (!byId.has(endpoint.id)) byId.set(endpoint.id, endpoint);
        else if (!this.#reported.has(endpoint.id)) {
          this.#reported.add(endpoint.id);
          this.#onDuplicate?.(endpoint.id);
        }
      }
    }
    this.#listener({ version: ++this.#version, endpoints: [...byId.values()] });
  }
}

import { normaliseBaseUrl, type EndpointSetListener, type EndpointSource } from './endpoint.ts';

/**
 * A fixed list of engine base URLs from configuration. Emits one set at
 * start; models are left unknown so the model probe asks each engine.
 */
export class StaticEndpointSource implements EndpointSource {
  readonly #urls: readonly string[];

  constructor(urls: readonly string[]) {
    this.#urls = [...new Set(urls.map(normaliseBaseUrl))];
  }

  start(listener: EndpointSetListener): void {
    listener({
      version: 1,
      endpoints: this.#urls.map((url) => ({
        id: url,
        url,
        models: undefined,
        labels: {},
        ready: true,
        draining: false,
      })),
    });
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}

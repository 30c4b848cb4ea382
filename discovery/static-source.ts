import { normaliseBaseUrl, type EndpointSetListener, type EndpointSource } from './endpoint.ts';

/** Source name of the `backends` list: keys its allow-list and engine key. */
export const STATIC_SOURCE_NAME = 'static';

/**
 * A fixed list of engine base URLs from configuration. Emits one set at
 * start; models are left unknown so the model probe asks each engine.
 */
export class StaticEndpointSource implements EndpointSource {
  readonly #urls: readonly string[];
  readonly #capacity: ReadonlyMap<string, number>;
  readonly #source: string | undefined;

  /**
   * `capacity` maps base URLs to their known max concurrent sequences;
   * `source` names the endpoints' source (the router passes {@link STATIC_SOURCE_NAME}).
   */
  constructor(urls: readonly string[], capacity: Readonly<Record<string, number>> = {}, source?: string) {
    this.#urls = [...new Set(urls.map(normaliseBaseUrl))];
    this.#capacity = new Map(Object.entries(capacity).map(([url, n]) => [normaliseBaseUrl(url), n]));
    this.#source = source;
  }

  start(listener: EndpointSetListener): void {
    listener({
      version: 1,
      endpoints: this.#urls.map((url) => {
        const capacity = this.#capacity.get(url);
        return {
          id: url,
          url,
          models: undefined,
          labels: {},
          ready: true,
          draining: false,
          ...(capacity === undefined ? {} : { capacity }),
          ...(this.#source === undefined ? {} : { source: this.#source }),
        };
      }),
    });
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}

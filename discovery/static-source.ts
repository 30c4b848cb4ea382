import { normaliseBaseUrl, type EndpointSetListener, type EndpointSource, type MetricsDialect } from './endpoint.ts';

/** Source name of the `backends` list: keys its allow-list and engine key. */
export const STATIC_SOURCE_NAME = 'static';

/**
 * A fixed list of engine base URLs from configuration. Emits one set at
 * start; models are left unknown so the model probe asks each engine.
 */
export class StaticEndpointSource implements EndpointSource {
  readonly #urls: readonly string[];
  readonly #capacity: ReadonlyMap<string, number>;
  readonly #dialects: ReadonlyMap<string, MetricsDialect>;
  readonly #source: string | undefined;

  /**
   * `capacity` maps base URLs to their known max concurrent sequences and
   * `dialects` to their metric dialects; `source` names the endpoints'
   * source (the router passes {@link STATIC_SOURCE_NAME}).
   */
  constructor(urls: readonly string[], capacity: Readonly<Record<string, number>> = {}, source?: string, dialects: Readonly<Record<string, MetricsDialect>> = {}) {
    this.#urls = [...new Set(urls.map(normaliseBaseUrl))];
    this.#capacity = byBaseUrl(capacity);
    this.#dialects = byBaseUrl(dialects);
    this.#source = source;
  }

  start(listener: EndpointSetListener): void {
    listener({
      version: 1,
      endpoints: this.#urls.map((url) => {
        const capacity = this.#capacity.get(url);
        const metricsDialect = this.#dialects.get(url);
        return {
          id: url,
          url,
          models: undefined,
          labels: {},
          ready: true,
          draining: false,
          ...(capacity === undefined ? {} : { capacity }),
          ...(metricsDialect === undefined ? {} : { metricsDialect }),
          ...(this.#source === undefined ? {} : { source: this.#source }),
        };
      }),
    });
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}

function byBaseUrl<T>(byUrl: Readonly<Record<string, T>>): ReadonlyMap<string, T> {
  return new Map(Object.entries(byUrl).map(([url, value]) => [normaliseBaseUrl(url), value]));
}

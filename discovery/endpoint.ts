/**
 * The shared endpoint types every discovery source produces and the router
 * consumes. Endpoint sets are immutable: a change is a new set with a higher
 * version.
 */

/** The engine metric dialects the router reads, in the order `auto` tries them. */
export const ENGINE_DIALECTS = ['vllm', 'sglang', 'llamacpp', 'tgi'] as const;

/** An engine's metric dialect: whose gauge names its `/metrics` serves. */
export type EngineDialect = (typeof ENGINE_DIALECTS)[number];

/** How an endpoint's metrics are read: `auto` detects the dialect from each scrape; `none` never scrapes (routing uses in-flight counts). */
export type MetricsDialect = EngineDialect | 'auto' | 'none';

/** Every accepted {@link MetricsDialect} value, for schemas and annotation parsing. */
export const METRICS_DIALECTS: readonly MetricsDialect[] = [...ENGINE_DIALECTS, 'auto', 'none'];

/** One inference server the router may send requests to. */
export interface Endpoint {
  /** Stable id, unique within a set; used as the `backend` metric label. */
  readonly id: string;
  /** Base URL (scheme, host, port, optional path prefix, no trailing slash). */
  readonly url: string;
  /**
   * Models the endpoint serves. `undefined` while unknown (the model probe
   * will ask the endpoint); an endpoint with unknown models is not routable.
   */
  readonly models: readonly string[] | undefined;
  /**
   * The LoRA adapters among its models, as the endpoint's own `/v1/models`
   * reported them: adapter id → base model id (vLLM's `parent`), one entry
   * per model that has a parent. Absent when none does, and always for
   * endpoints whose models a label, annotation or config named (they carry no
   * parents). May name ids that `models` no longer holds (a model allow-list
   * drops from `models` only): read it for the models you hold, never as a
   * list of models served. Informational: routing goes by `models` alone.
   */
  readonly adapters?: ReadonlyMap<string, string>;
  /** Labels from the source (pod labels, or empty for static endpoints). */
  readonly labels: Readonly<Record<string, string>>;
  /** The source considers it able to take new requests (e.g. pod Ready). */
  readonly ready: boolean;
  /** Leaving: no new requests, in-flight ones finish. */
  readonly draining: boolean;
  /** Max concurrent sequences, when the source knows it (config, pod annotation). */
  readonly capacity?: number;
  /** How its metrics are read, when the source says (pod annotation or label, per-URL config); else the router's default. */
  readonly metricsDialect?: MetricsDialect;
  /**
   * Name of the discovery source that produced it (`static`, `default`, or a
   * `discovery.sources` key); undefined for sources embedded without a name.
   * Keys the source's model allow-list and engine credentials, which are kept
   * apart from the endpoint so nothing that renders endpoints can show them.
   */
  readonly source?: string;
}

/** An immutable snapshot of the endpoints one source (or the union) knows. */
export interface EndpointSet {
  /** Increases with every change; never reused. */
  readonly version: number;
  readonly endpoints: readonly Endpoint[];
}

/** Receives every new endpoint set, in order. Must not throw. */
export type EndpointSetListener = (set: EndpointSet) => void;

/**
 * A producer of endpoint sets (static list, Kubernetes pods, EndpointSlices).
 * `start` delivers the first set as soon as it is known (synchronously for
 * static sources); `stop` releases timers and connections.
 */
export interface EndpointSource {
  start(listener: EndpointSetListener): void;
  stop(): Promise<void>;
}

/** Normalises a base URL: lower-case scheme and host, no trailing slash. */
export function normaliseBaseUrl(raw: string): string {
  const url = new URL(raw);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

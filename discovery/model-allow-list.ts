/**
 * Limits the models each discovery source's endpoints may serve.
 *
 * A source trusts whatever matches its selector: any pod in a watched
 * namespace that carries the label can annotate `switchyard.io/models:
 * llama-prod` (or answer `/v1/models` with it) and would then receive that
 * model's prompts. With an allow-list, an endpoint only counts as serving the
 * models its source allows; the rest of its claim is dropped (and logged
 * once), and an endpoint left with no model is not routable.
 *
 * This wraps the model probe, so it filters models from labels, annotations
 * and `/v1/models` alike, each endpoint by its own source's list.
 */
import type { Endpoint, EndpointSet, EndpointSetListener, EndpointSource } from './endpoint.ts';

/** Told when an endpoint claims models its source does not allow; must not throw. */
export type DroppedModelsListener = (event: DroppedModels) => void;

/** One endpoint's refused claim. */
export interface DroppedModels {
  readonly id: string;
  readonly source: string;
  /** The refused model names (at most {@link MAX_DROPPED_SHOWN}; names come from the pod). */
  readonly dropped: readonly string[];
  /** How many models were refused in all. */
  readonly droppedCount: number;
  /** The models it still serves. */
  readonly kept: readonly string[];
}

const MAX_DROPPED_SHOWN = 10;
const MAX_NAME_SHOWN = 100;

/**
 * Matches model names against allow-list patterns: an exact name, or a
 * prefix followed by one `*` at the end (`team-b-*`; `*` alone allows any).
 */
export function modelMatcher(patterns: readonly string[]): (model: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('*')) prefixes.push(pattern.slice(0, -1));
    else exact.add(pattern);
  }
  return (model) => exact.has(model) || prefixes.some((prefix) => model.startsWith(prefix));
}

/** A source decorator that keeps, per endpoint, only the models its source allows. */
export class ModelAllowList implements EndpointSource {
  readonly #inner: EndpointSource;
  readonly #matchers: ReadonlyMap<string, (model: string) => boolean>;
  readonly #onDropped: DroppedModelsListener;
  /** Per endpoint id, the refused claim last reported, so each claim is logged once. */
  #reported = new Map<string, string>();

  /** `allowLists` maps source names to patterns; a source without an entry may serve any model. */
  constructor(inner: EndpointSource, allowLists: ReadonlyMap<string, readonly string[]>, onDropped: DroppedModelsListener) {
    this.#inner = inner;
    this.#matchers = new Map([...allowLists].map(([source, patterns]) => [source, modelMatcher(patterns)]));
    this.#onDropped = onDropped;
  }

  start(listener: EndpointSetListener): void {
    this.#inner.start((set) => listener(this.#filter(set)));
  }

  stop(): Promise<void> {
    return this.#inner.stop();
  }

  #filter(set: EndpointSet): EndpointSet {
    if (this.#matchers.size === 0) return set;
    const reported = new Map<string, string>();
    const endpoints = set.endpoints.map((endpoint) => this.#allowed(endpoint, reported));
    this.#reported = reported; // endpoints that left are forgotten: a return is reported again
    return { version: set.version, endpoints };
  }

  #allowed(endpoint: Endpoint, reported: Map<string, string>): Endpoint {
    const source = endpoint.source;
    const allows = source === undefined ? undefined : this.#matchers.get(source);
    if (allows === undefined || endpoint.models === undefined || source === undefined) return endpoint;
    const kept = endpoint.models.filter(allows);
    if (kept.length === endpoint.models.length) return endpoint;
    const dropped = endpoint.models.filter((model) => !allows(model));
    const key = dropped.join('\n');
    reported.set(endpoint.id, key);
    if (this.#reported.get(endpoint.id) !== key) {
      this.#onDropped({
        id: endpoint.id,
        source,
        dropped: dropped.slice(0, MAX_DROPPED_SHOWN).map((model) => model.slice(0, MAX_NAME_SHOWN)),
        droppedCount: dropped.length,
        kept,
      });
    }
    return { ...endpoint, models: kept };
  }
}

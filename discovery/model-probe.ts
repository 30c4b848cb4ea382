/**
 * Fills in the models of endpoints whose source did not say (static backends,
 * pods without a models label) by asking each endpoint's `/v1/models`, and
 * keeps the answer fresh in the background. Wraps another source and emits
 * derived endpoint sets; an endpoint stays unroutable until its models are
 * known, and keeps its last known models when a later refresh fails.
 */
import type { Dispatcher } from 'undici';
import type { Endpoint, EndpointSet, EndpointSetListener, EndpointSource } from './endpoint.ts';
import { fetchText } from './upstream-body.ts';

/**
 * Fetches the model ids an endpoint serves. `source` is the endpoint's
 * discovery source (it chooses the engine key sent). Rejects on any failure.
 */
export type ModelFetcher = (baseUrl: string, source?: string) => Promise<readonly string[]>;

/** What the probe knows about one endpoint, for `/debug/endpoints`. */
export interface ModelProbeStatus {
  readonly models: readonly string[] | undefined;
  /** Epoch ms of the last successful fetch, or undefined. */
  readonly fetchedAt: number | undefined;
  /** Short description of the last failure, cleared on success. */
  readonly lastError: string | undefined;
}

/** Timing of the probe, in milliseconds. */
export interface ModelProbeTiming {
  readonly intervalMs: number;
  readonly retryMs: number;
}

interface ProbeState {
  readonly url: string;
  readonly source: string | undefined;
  models: readonly string[] | undefined;
  fetchedAt: number | undefined;
  lastError: string | undefined;
  timer: NodeJS.Timeout | undefined;
  inFlight: boolean;
}

const MAX_MODELS_BODY_BYTES = 1024 * 1024;

/** A source decorator that resolves unknown endpoint models through `/v1/models`. */
export class ModelProbe implements EndpointSource {
  readonly #inner: EndpointSource;
  readonly #fetchModels: ModelFetcher;
  readonly #timing: ModelProbeTiming;
  readonly #states = new Map<string, ProbeState>();
  #base: EndpointSet | undefined;
  #listener: EndpointSetListener | undefined;
  #version = 0;
  #stopped = false;

  constructor(inner: EndpointSource, fetchModels: ModelFetcher, timing: ModelProbeTiming) {
    this.#inner = inner;
    this.#fetchModels = fetchModels;
    this.#timing = timing;
  }

  start(listener: EndpointSetListener): void {
    this.#listener = listener;
    this.#inner.start((set) => this.#onBaseSet(set));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const state of this.#states.values()) clearTimeout(state.timer);
    this.#states.clear();
    await this.#inner.stop();
  }

  /** The probe's view of one endpoint URL of `source`, or undefined when it does not probe it. */
  status(url: string, source?: string): ModelProbeStatus | undefined {
    const state = this.#states.get(probeKey(url, source));
    return state && { models: state.models, fetchedAt: state.fetchedAt, lastError: state.lastError };
  }

  #onBaseSet(set: EndpointSet): void {
    this.#base = set;
    // Keyed by source and URL: each source's endpoints are asked with that source's key, and
    // what one source's endpoint answers never fills in the models of another source's.
    const wanted = new Map<string, Endpoint>();
    for (const endpoint of set.endpoints) if (endpoint.models === undefined) wanted.set(probeKey(endpoint.url, endpoint.source), endpoint);
    for (const [key, state] of this.#states) {
      if (!wanted.has(key)) {
        clearTimeout(state.timer);
        this.#states.delete(key);
      }
    }
    for (const [key, endpoint] of wanted) {
      if (this.#states.has(key)) continue;
      const state: ProbeState = { url: endpoint.url, source: endpoint.source, models: undefined, fetchedAt: undefined, lastError: undefined, timer: undefined, inFlight: false };
      this.#states.set(key, state);
      void this.#probe(key, state);
    }
    this.#emit();
  }

  async #probe(key: string, state: ProbeState): Promise<void> {
    if (state.inFlight || this.#stopped) return;
    state.inFlight = true;
    let changed = false;
    try {
      const models = [...(await this.#fetchModels(state.url, state.source))].sort();
      changed = state.models === undefined || state.models.join('\n') !== models.join('\n');
      state.models = models;
      state.fetchedAt = Date.now();
      state.lastError = undefined;
    } catch (err) {
      state.lastError = err instanceof Error ? err.message : String(err);
    } finally {
      state.inFlight = false;
    }
    if (this.#states.get(key) !== state) return; // endpoint left while we were asking
    const delay = state.models === undefined ? this.#timing.retryMs : this.#timing.intervalMs;
    state.timer = setTimeout(() => void this.#probe(key, state), delay);
    state.timer.unref();
    if (changed) this.#emit();
  }

  #emit(): void {
    const base = this.#base;
    if (base === undefined || this.#listener === undefined) return;
    const endpoints = base.endpoints.map((endpoint): Endpoint => {
      if (endpoint.models !== undefined) return endpoint;
      return { ...endpoint, models: this.#states.get(probeKey(endpoint.url, endpoint.source))?.models };
    });
    this.#listener({ version: ++this.#version, endpoints });
  }
}

/** Source names are DNS labels (no spaces), so the key cannot be ambiguous. */
function probeKey(url: string, source: string | undefined): string {
  return source === undefined ? url : `${source} ${url}`;
}

/**
 * The production {@link ModelFetcher}: GET `{baseUrl}/v1/models` through the
 * given dispatcher, with a timeout and a body size cap, sending the engine
 * key of the endpoint's source when `authorization` gives one (the whole
 * `Authorization` value, e.g. `Bearer KEY`: one for every source, or chosen
 * per source).
 */
export function httpModelFetcher(
  dispatcher: Dispatcher,
  timeoutMs: number,
  authorization?: string | ((source: string | undefined) => string | undefined),
): ModelFetcher {
  const plain: Record<string, string> = { accept: 'application/json' };
  const authorizationFor = typeof authorization === 'function' ? authorization : () => authorization;
  return async (baseUrl, source) => {
    const value = authorizationFor(source);
    const headers = value === undefined ? plain : { ...plain, authorization: value };
    return parseModelList(await fetchText(dispatcher, new URL(`${baseUrl}/v1/models`), { timeoutMs, maxBytes: MAX_MODELS_BODY_BYTES, headers }));
  };
}

/** Extracts model ids from an OpenAI `/v1/models` body. @throws on any other shape. */
export function parseModelList(text: string): string[] {
  const parsed: unknown = JSON.parse(text);
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new Error('models response has no data list');
  const ids: string[] = [];
  for (const item of data) {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && id !== '') ids.push(id);
  }
  return ids;
}

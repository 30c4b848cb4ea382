/**
 * Fills in the models of endpoints whose source did not say (static backends,
 * pods without a models label) by asking each endpoint's `/v1/models`, and
 * keeps the answer fresh in the background. Wraps another source and emits
 * derived endpoint sets; an endpoint stays unroutable until its models are
 * known, and keeps its last known models when a later refresh fails.
 *
 * vLLM lists each loaded LoRA adapter next to its base model, with the base
 * model's id as `parent`; the probe keeps those parents as the endpoint's
 * `adapters`, so the router's own model list can tell adapters apart.
 */
import { Buffer } from 'node:buffer';
import type { Dispatcher } from 'undici';
import type { Endpoint, EndpointSet, EndpointSetListener, EndpointSource } from './endpoint.ts';
import { fetchText } from './upstream-body.ts';

/** One entry of an endpoint's `/v1/models` answer. */
export interface ProbedModel {
  /** The model id requests name; never empty. */
  readonly id: string;
  /**
   * The base model this one is a LoRA adapter of (vLLM's `parent`); absent
   * for a base model. Never empty, never equal to `id`, and at most
   * {@link MAX_PARENT_JSON_BYTES} of JSON text.
   */
  readonly parent?: string;
}

/**
 * Fetches the models an endpoint serves. `source` is the endpoint's
 * discovery source (it chooses the engine key sent). Rejects on any failure.
 */
export type ModelFetcher = (baseUrl: string, source?: string) => Promise<readonly ProbedModel[]>;

/**
 * Longest `parent` kept, in bytes of its JSON text: the same cap the request
 * scanner puts on a `model` (`MAX_FIELD_BYTES` in
 * router/request/json-body-scanner.ts), so every parent kept is an id a
 * client could send. A longer one is dropped and its model counts as a base
 * model. Kept here rather than imported: discovery does not depend on the router.
 */
export const MAX_PARENT_JSON_BYTES = 4_096;

/** What the probe knows about one endpoint, for `/debug/endpoints`. */
export interface ModelProbeStatus {
  readonly models: readonly string[] | undefined;
  /** Adapter id → base model id from the last successful fetch (JSON-ready); undefined when it listed no adapter. */
  readonly adapters: Readonly<Record<string, string>> | undefined;
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
  adapters: ReadonlyMap<string, string> | undefined;
  /** The last answer, sorted, as JSON: a refresh that changes only a parent is a change too. */
  answer: string | undefined;
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
    if (state === undefined) return undefined;
    // Object.fromEntries defines own properties, so an adapter named `__proto__` is shown as one.
    const adapters = state.adapters && Object.fromEntries(state.adapters);
    return { models: state.models, adapters, fetchedAt: state.fetchedAt, lastError: state.lastError };
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
      const state: ProbeState = {
        url: endpoint.url,
        source: endpoint.source,
        models: undefined,
        adapters: undefined,
        answer: undefined,
        fetchedAt: undefined,
        lastError: undefined,
        timer: undefined,
        inFlight: false,
      };
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
      const probed = [...(await this.#fetchModels(state.url, state.source))].sort(byIdThenParent);
      const answer = JSON.stringify(probed.map((model) => [model.id, model.parent ?? null]));
      changed = state.answer !== answer;
      state.answer = answer;
      state.models = probed.map((model) => model.id);
      state.adapters = adaptersOf(probed);
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
      // Models a label, annotation or config named come with no parents: those endpoints list no adapters.
      if (endpoint.models !== undefined) return endpoint;
      const state = this.#states.get(probeKey(endpoint.url, endpoint.source));
      const adapters = state?.adapters;
      return { ...endpoint, models: state?.models, ...(adapters === undefined ? {} : { adapters }) };
    });
    this.#listener({ version: ++this.#version, endpoints });
  }
}

/** Orders an answer by id, then parent (none first), so the same list in another order is no change. */
function byIdThenParent(a: ProbedModel, b: ProbedModel): number {
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  if (a.parent === b.parent) return 0;
  if (a.parent === undefined) return -1;
  if (b.parent === undefined) return 1;
  return a.parent < b.parent ? -1 : 1;
}

/** Adapter id → parent of a sorted answer; an id listed twice keeps its smallest parent. Undefined when none has a parent. */
function adaptersOf(sorted: readonly ProbedModel[]): ReadonlyMap<string, string> | undefined {
  const adapters = new Map<string, string>();
  for (const { id, parent } of sorted) if (parent !== undefined && !adapters.has(id)) adapters.set(id, parent);
  return adapters.size === 0 ? undefined : adapters;
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

/**
 * Extracts the models of an OpenAI `/v1/models` body, in its order: entries
 * without a non-empty string `id` are skipped, and a `parent` counts only as
 * {@link ProbedModel.parent} allows (vLLM's `null` for a base model, or any
 * other value, means none). @throws on any other shape.
 */
export function parseModelList(text: string): ProbedModel[] {
  const parsed: unknown = JSON.parse(text);
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new Error('models response has no data list');
  const models: ProbedModel[] = [];
  for (const item of data) {
    const { id, parent } = (item ?? {}) as { id?: unknown; parent?: unknown };
    if (typeof id !== 'string' || id === '') continue;
    models.push(isParent(parent, id) ? { id, parent } : { id });
  }
  return models;
}

/** A parent worth keeping: a non-empty string other than the id, short enough to be a model id. */
function isParent(parent: unknown, id: string): parent is string {
  return typeof parent === 'string' && parent !== '' && parent !== id && Buffer.byteLength(JSON.stringify(parent)) <= MAX_PARENT_JSON_BYTES;
}

/**
 * The router's own Prometheus metrics, on a private registry served by the
 * admin port. Names are stable (dashboards and alerts depend on them): prefix
 * `switchyard_`, base units, `_total` on counters. The `backend` label only
 * takes ids of endpoints in the current set, and series of departed
 * endpoints are removed; the `model` label only takes known model names.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { UPSTREAM_FAILURE_KINDS, type UpstreamFailureKind } from '../load/load-view.ts';

/** vLLM's `vllm:time_to_first_token_seconds` bucket edges, so panels can compare. */
export const TTFT_BUCKETS_S = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];

/** vLLM's `vllm:e2e_request_latency_seconds` bucket edges. */
export const E2E_BUCKETS_S = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];

/** Read-only facts the metrics need from the rest of the router at scrape time. */
export interface MetricsSources {
  /** In-flight count per current endpoint id. */
  backendInFlight(): Iterable<readonly [id: string, inFlight: number]>;
  /** Router-wide open requests. */
  routerInFlight(): number;
}

/** Why a retry happened; metric label values. */
export type RetryReason = 'connect' | 'reset';

/** All metrics of one router process. */
export class RouterMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'route' | 'model' | 'status'>;
  readonly #duration: Histogram<'route' | 'model'>;
  readonly #ttfb: Histogram<'route' | 'model'>;
  readonly #upstreamErrors: Counter<'backend' | 'kind'>;
  readonly #retries: Counter<'reason'>;
  readonly #requestChildren = new Map<string, { inc(): void }>();
  readonly #timingChildren = new Map<string, { duration: { observe(v: number): void }; ttfb: { observe(v: number): void } }>();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({
      name: 'switchyard_requests_total',
      help: 'Requests answered, by route, model and HTTP status (router-generated answers included).',
      labelNames: ['route', 'model', 'status'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'switchyard_request_duration_seconds',
      help: 'End-to-end request duration as the router saw it, until the last response byte.',
      labelNames: ['route', 'model'],
      buckets: E2E_BUCKETS_S,
      registers,
    });
    this.#ttfb = new Histogram({
      name: 'switchyard_time_to_first_byte_seconds',
      help: 'Time from request arrival to the first upstream response body byte (TTFT for streams).',
      labelNames: ['route', 'model'],
      buckets: TTFT_BUCKETS_S,
      registers,
    });
    this.#upstreamErrors = new Counter({
      name: 'switchyard_upstream_errors_total',
      help: 'Upstream failures by endpoint and kind (connect, reset, timeout, midstream, status_5xx).',
      labelNames: ['backend', 'kind'],
      registers,
    });
    this.#retries = new Counter({
      name: 'switchyard_retries_total',
      help: 'Requests retried on another endpoint, by the failure that caused the retry.',
      labelNames: ['reason'],
      registers,
    });
    new Gauge({
      name: 'switchyard_backend_in_flight_requests',
      help: 'Requests the router has open to each endpoint.',
      labelNames: ['backend'],
      registers,
      collect() {
        this.reset();
        for (const [id, inFlight] of sources.backendInFlight()) this.set({ backend: id }, inFlight);
      },
    });
    new Gauge({
      name: 'switchyard_in_flight_requests',
      help: 'Requests the router is handling right now, all endpoints together.',
      registers,
      collect() {
        this.set(sources.routerInFlight());
      },
    });
  }

  /** Counts one answered request. */
  countRequest(route: string, model: string, status: number): void {
    const key = `${route}\0${model}\0${status}`;
    let child = this.#requestChildren.get(key);
    if (child === undefined) {
      child = this.#requests.labels(route, model, String(status));
      this.#requestChildren.set(key, child);
    }
    child.inc();
  }

  /** Records the timings of one proxied request, in seconds. `ttfbS` is undefined when no body byte came. */
  observeTimings(route: string, model: string, durationS: number, ttfbS: number | undefined): void {
    const key = `${route}\0${model}`;
    let child = this.#timingChildren.get(key);
    if (child === undefined) {
      child = { duration: this.#duration.labels(route, model), ttfb: this.#ttfb.labels(route, model) };
      this.#timingChildren.set(key, child);
    }
    child.duration.observe(durationS);
    if (ttfbS !== undefined) child.ttfb.observe(ttfbS);
  }

  /** Counts an upstream failure of `backend`. */
  countUpstreamError(backend: string, kind: UpstreamFailureKind): void {
    this.#upstreamErrors.labels(backend, kind).inc();
  }

  /** Counts a retry. */
  countRetry(reason: RetryReason): void {
    this.#retries.labels(reason).inc();
  }

  /** Removes every series of an endpoint that left the endpoint set. */
  forgetBackend(backend: string): void {
    for (const kind of UPSTREAM_FAILURE_KINDS) this.#upstreamErrors.remove({ backend, kind });
  }
}

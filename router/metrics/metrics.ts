/**
 * The router's own Prometheus metrics, on a private registry served by the
 * admin port. Names are stable (dashboards and alerts depend on them): prefix
 * `switchyard_`, base units, `_total` on counters. The `model` label only
 * takes known model names.
 *
 * The `backend` label follows the endpoint's lifetime exactly, or the series
 * count grows with every pod that ever existed. Writes for an endpoint can
 * arrive after it left (a scrape that was already out, a stream that breaks
 * later, the ejection that failure causes), and they used to bring its
 * series back after they had been removed. So every labelled write takes the
 * endpoint itself, not its id, and is dropped unless the endpoint is still
 * {@link MetricBackend.present}; the load view decides that in one place and
 * reports the departure, which removes the series (see {@link RouterMetrics.forgetBackend}).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EndpointView } from '../load/endpoint-view.ts';
import { UPSTREAM_FAILURE_KINDS, type UpstreamFailureKind } from '../load/upstream-failure-kinds.ts';
import { DECISION_OUTCOMES, type DecisionOutcome } from '../scheduling/candidate.ts';
import type { Priority } from '../scheduling/priority.ts';
import { VERSION } from '../version.ts';
import { registerBackendGauges, type BackendGauges } from './backend-gauges.ts';
import { CellCounter, CellHistogram } from './cell-metrics.ts';
import { LoraMetrics } from './lora-metrics.ts';
import { BACKGROUND_TASKS, PROCESS_FAILURES, RETRY_REASONS, SHARED_STATE_TASKS, SHED_REASONS, listLabelValues, type BackgroundTask, type RetryReason, type ShedReason } from './label-values.ts';

// Part of this module's surface: what MetricsSources yields, and the names background failures are counted by.
export type { BackendGauges } from './backend-gauges.ts';
export type { BackgroundTask } from './label-values.ts';

/** prom-client default metrics that read NaN or a sentinel when scraped twice within one sampling tick. */
const EMPTY_WINDOW_LAG_METRICS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'].map((stat) => `nodejs_eventloop_lag_${stat}_seconds`);

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

/**
 * An endpoint as a labelled metric write names it: its id (the label value)
 * and whether it is still in the endpoint set. Every {@link EndpointView} is
 * one; `present` turns false when the endpoint leaves and never turns true
 * again (an endpoint that comes back gets a new state).
 */
export type MetricBackend = Pick<EndpointView, 'id' | 'present'>;

/** Read-only facts the metrics need from the rest of the router at scrape time. */
export interface MetricsSources {
  /** Every current endpoint (call after refreshing the load view's clock). */
  backends(): Iterable<BackendGauges>;
  /** Router-wide open requests. */
  routerInFlight(): number;
  /** Open client connections on the traffic port. */
  connections(): number;
  /** Current event-loop lag (ms). */
  eventLoopLagMs(): number;
  /** Requests waiting in the router queue. */
  queueLength(): number;
  /** Bytes held by buffered request bodies (the body budget in use). */
  bufferedBodyBytes(): number;
}

/** All metrics of one router process. */
export class RouterMetrics {
  readonly registry = new Registry();
  // Written on every request: cells, not prom-client's children (see cell-metrics.ts).
  readonly #requests: CellCounter;
  readonly #duration: CellHistogram;
  readonly #ttfb: CellHistogram;
  readonly #ttft: CellHistogram;
  readonly #upstreamErrors: Counter<'backend' | 'kind'>;
  readonly #retries: Counter<'reason'>;
  readonly #scrapeDuration: Histogram;
  readonly #scrapeFailures: Counter<'backend'>;
  readonly #ejections: Counter<'backend'>;
  readonly #decisions: CellCounter;
  readonly #shed: Counter<'reason' | 'priority'>;
  readonly #queued: Counter<'priority'>;
  readonly #queueWait: Histogram;
  readonly #shedDuration: Histogram;
  readonly #backgroundFailures: Counter<'task'>;
  /** The LoRA series: per engine from its last scrape, and requests per adapter and engine. */
  readonly lora: LoraMetrics;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // prom-client derives these from a delay histogram it resets at every scrape: two scrapes within one
    // sampling tick render `Nan` (the format says NaN) and a min of 9223372036.85 s (an empty
    // histogram's sentinel), which strict parsers reject. switchyard_event_loop_lag_seconds and
    // nodejs_eventloop_lag_seconds stay.
    for (const name of EMPTY_WINDOW_LAG_METRICS) this.registry.removeSingleMetric(name);
    const registry = this.registry;
    this.#requests = new CellCounter({
      name: 'switchyard_requests_total',
      help: 'Requests answered, by route, model and HTTP status (router-generated answers included).',
      labelNames: ['route', 'model', 'status'],
      registry,
    });
    this.#duration = new CellHistogram({
      name: 'switchyard_request_duration_seconds',
      help: 'End-to-end request duration as the router saw it, until the last response byte.',
      labelNames: ['route', 'model'],
      buckets: E2E_BUCKETS_S,
      registry,
    });
    this.#ttfb = new CellHistogram({
      name: 'switchyard_time_to_first_byte_seconds',
      help: 'Time from request arrival to the first upstream response body byte (TTFT for streams).',
      labelNames: ['route', 'model'],
      buckets: TTFT_BUCKETS_S,
      registry,
    });
    // Apart from the one above: a non-streamed answer's first byte comes with its last, so
    // mixing both would put whole generations into a TTFT SLO.
    this.#ttft = new CellHistogram({
      name: 'switchyard_time_to_first_token_seconds',
      help: 'Streamed requests answered 2xx: time from request arrival to the first response body byte (the first token), as the router saw it.',
      labelNames: ['route', 'model'],
      buckets: TTFT_BUCKETS_S,
      registry,
    });
    this.#upstreamErrors = new Counter({
      name: 'switchyard_upstream_errors_total',
      help: `Upstream failures by endpoint and kind (${listLabelValues(UPSTREAM_FAILURE_KINDS)}).`,
      labelNames: ['backend', 'kind'],
      registers,
    });
    this.#retries = new Counter({
      name: 'switchyard_retries_total',
      help: `Requests retried on another endpoint, by the failure that caused the retry (${listLabelValues(RETRY_REASONS)}).`,
      labelNames: ['reason'],
      registers,
    });
    this.#scrapeDuration = new Histogram({
      name: 'switchyard_scrape_duration_seconds',
      help: "Duration of one scrape of an engine's /metrics, failed ones included.",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    });
    this.#scrapeFailures = new Counter({
      name: 'switchyard_scrape_failures_total',
      help: 'Scrapes that failed (unreachable, timeout, too large, or unusable metrics).',
      labelNames: ['backend'],
      registers,
    });
    this.#ejections = new Counter({
      name: 'switchyard_ejections_total',
      help: 'Times an endpoint was ejected after repeated failures.',
      labelNames: ['backend'],
      registers,
    });
    this.#decisions = new CellCounter({
      name: 'switchyard_policy_decisions_total',
      help: `Routing decisions by scheduling profile (policy) and outcome: ${listLabelValues(DECISION_OUTCOMES, { assigned: 'a session kept on its shared assignment', placed: 'a new shared session placed by load', lora_hit: 'a LoRA adapter request on its first engine (running it, else a free adapter slot)', lora_spill: 'one walked on by load' })}.`,
      labelNames: ['policy', 'outcome'],
      registry,
    });
    this.#shed = new Counter({
      name: 'switchyard_shed_total',
      help: `Requests shed with 429, by reason (${listLabelValues(SHED_REASONS)}) and priority.`,
      labelNames: ['reason', 'priority'],
      registers,
    });
    this.#queued = new Counter({
      name: 'switchyard_queued_total',
      help: 'Requests that waited in the router queue because every candidate was saturated.',
      labelNames: ['priority'],
      registers,
    });
    this.#queueWait = new Histogram({
      name: 'switchyard_queue_wait_seconds',
      help: 'Time requests spent in the router queue, whatever the outcome.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#shedDuration = new Histogram({
      name: 'switchyard_shed_duration_seconds',
      help: 'Time from request arrival to a complete 429 answer, inside the router: what shedding costs.',
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1],
      registers,
    });
    this.#backgroundFailures = new Counter({
      name: 'switchyard_background_failures_total',
      help: `Failures nobody was waiting for, by task: a background task of the shared state (${listLabelValues(SHARED_STATE_TASKS)}), or the process-level net (${listLabelValues(PROCESS_FAILURES)}). Logged and counted; the router keeps running. Any is a bug to report.`,
      labelNames: ['task'],
      registers,
    });
    // Every task's series from the start, at 0: an alert on increase() then sees the first failure too.
    for (const task of BACKGROUND_TASKS) this.#backgroundFailures.labels(task).inc(0);
    const scalarGauges: [string, string, () => number][] = [
      ['switchyard_open_connections', 'Open client connections on the traffic port.', () => sources.connections()],
      ['switchyard_event_loop_lag_seconds', 'Current event-loop lag: the latest probe tick, or how overdue the next one is (shedding waits until the lag lasted 4 ticks or grew at each).', () => sources.eventLoopLagMs() / 1000],
      ['switchyard_queue_length', 'Requests waiting in the router queue.', () => sources.queueLength()],
      ['switchyard_buffered_body_bytes', 'Bytes held by buffered request bodies, queued and in flight (the body budget in use).', () => sources.bufferedBodyBytes()],
    ];
    for (const [name, help, read] of scalarGauges) {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    }
    registerBackendGauges(registers, () => sources.backends());
    this.lora = new LoraMetrics(registers, () => sources.backends());
    new Gauge({
      name: 'switchyard_build_info',
      help: 'Always 1; its labels name the running version and Node.js, so a rollout shows which replicas run what.',
      labelNames: ['version', 'node_version'],
      registers,
    }).set({ version: VERSION, node_version: process.version }, 1);
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
    this.#requests.cell(route, model, String(status)).inc();
  }

  /** Records the timings of one proxied request, in seconds. `ttfbS` is undefined when no body byte came. */
  observeTimings(route: string, model: string, durationS: number, ttfbS: number | undefined): void {
    this.#duration.cell(route, model).observe(durationS);
    if (ttfbS !== undefined) this.#ttfb.cell(route, model).observe(ttfbS);
  }

  /** Records the time to first token (s) of a streamed request answered 2xx. */
  observeFirstToken(route: string, model: string, seconds: number): void {
    this.#ttft.cell(route, model).observe(seconds);
  }

  /** Counts an upstream failure of `backend`; dropped once it has left the set. */
  countUpstreamError(backend: MetricBackend, kind: UpstreamFailureKind): void {
    if (backend.present) this.#upstreamErrors.labels(backend.id, kind).inc();
  }

  /** Counts a retry. */
  countRetry(reason: RetryReason): void {
    this.#retries.labels(reason).inc();
  }

  /**
   * Records one scrape. Its duration counts even when `backend` left while
   * it ran (that histogram has no backend label); its failure does not.
   */
  observeScrape(backend: MetricBackend, seconds: number, failed: boolean): void {
    this.#scrapeDuration.observe(seconds);
    if (failed && backend.present) this.#scrapeFailures.labels(backend.id).inc();
  }

  /** Counts an ejection; dropped once `backend` has left the set. */
  countEjection(backend: MetricBackend): void {
    if (backend.present) this.#ejections.labels(backend.id).inc();
  }

  /** `task` is one of {@link BACKGROUND_TASKS}, never request data. */
  countBackgroundFailure(task: BackgroundTask): void {
    this.#backgroundFailures.labels(task).inc();
  }

  /** Counts a shed request. */
  countShed(reason: ShedReason, priority: Priority): void {
    this.#shed.labels(reason, priority).inc();
  }

  /** Counts a request that entered the router queue. */
  countQueued(priority: Priority): void {
    this.#queued.labels(priority).inc();
  }

  /** Records how long the router took to answer a shed request. */
  observeShedDuration(seconds: number): void {
    this.#shedDuration.observe(seconds);
  }

  /** Records how long a request waited in the router queue. */
  observeQueueWait(seconds: number): void {
    this.#queueWait.observe(seconds);
  }

  /** Counts a routing decision. */
  countDecision(policy: string, outcome: DecisionOutcome): void {
    this.#decisions.cell(policy, outcome).inc();
  }

  /**
   * Removes every series of an endpoint that left the endpoint set. Call
   * once `backend.present` is false, so no later write can bring them back.
   * The per-endpoint gauges need nothing: they are rebuilt from the current
   * set at every scrape.
   */
  forgetBackend(backend: MetricBackend): void {
    const id = backend.id;
    for (const kind of UPSTREAM_FAILURE_KINDS) this.#upstreamErrors.remove({ backend: id, kind });
    this.#scrapeFailures.remove({ backend: id });
    this.#ejections.remove({ backend: id });
    this.lora.forgetBackend(id);
  }
}

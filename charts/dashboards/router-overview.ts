/**
 * "switchyard / Router": what the router replicas do with the traffic:
 * request and shed rates, router-observed latency and TTFT SLO attainment,
 * in-flight work, upstream failures, routing decisions, the endpoint set,
 * the Gateway API Inference Extension objects it reads (InferencePools,
 * model rewrites, objectives), shared state in Redis with the sessions,
 * quotas and API keys it carries, and the health of the replicas themselves.
 */
import type { DashboardSpec, PanelSpec, RowSpec } from './panels.ts';
import { MODEL, perBackend, POOL, quantile, ROUTER, series, sumBy, sumRate, leMatcher } from './promql.ts';
import { datasourceVariable, poolVariable, routerVariables, ttftSloVariable } from './variables.ts';

const QUANTILES = [0.5, 0.95, 0.99] as const;

function quantiles(histogram: string, ...matchers: string[]): PanelSpec['queries'] {
  return QUANTILES.map((q) => ({ expr: quantile(q, histogram, [], ...matchers), legend: `p${q * 100}` }));
}

const traffic: RowSpec = {
  title: 'Traffic',
  panels: [
    {
      title: 'Requests/s by model and status',
      description: 'Answers per second across all router replicas, router-generated ones (429, 503, 502) included. Sheds before the body was read carry model "unknown".',
      unit: 'reqps',
      queries: [{ expr: sumRate(['model', 'status'], 'switchyard_requests_total', ROUTER, MODEL), legend: '{{model}} {{status}}' }],
    },
    {
      title: 'Shed ratio',
      description: 'Share of answered requests the router shed with 429 (every reason), across all replicas.',
      unit: 'percentunit',
      min: 0,
      queries: [{ expr: `${sumRate([], 'switchyard_shed_total', ROUTER)} / ${sumRate([], 'switchyard_requests_total', ROUTER)}`, legend: 'shed' }],
    },
    {
      title: 'Shed requests by reason',
      description: 'Requests shed with 429 per second, by reason (saturated, queue_full, queue_timeout, in_flight_cap, connection_cap, event_loop_lag, body_budget) and priority.',
      unit: 'reqps',
      queries: [{ expr: sumRate(['reason', 'priority'], 'switchyard_shed_total', ROUTER), legend: '{{reason}} ({{priority}})' }],
    },
    {
      title: 'Router queue',
      description: 'Requests waiting in the router queues (every candidate saturated) and how many enter them per second.',
      unit: 'short',
      queries: [
        { expr: `${sumBy([])}(${series('switchyard_queue_length', ROUTER)})`, legend: 'waiting now' },
        { expr: sumRate([], 'switchyard_queued_total', ROUTER), legend: 'queued/s' },
      ],
    },
  ],
};

const latency: RowSpec = {
  title: 'Latency (router-observed)',
  panels: [
    {
      title: 'Time to first token (streamed, 2xx)',
      description: 'From request arrival at the router to the first response body byte of streamed 2xx answers, across all replicas (buckets summed, then interpolated). Engine queueing included.',
      unit: 's',
      queries: quantiles('switchyard_time_to_first_token_seconds', ROUTER, MODEL),
    },
    {
      title: 'End-to-end latency',
      description: 'From request arrival to the last response byte of every forwarded request, router queue wait included, across all replicas.',
      unit: 's',
      queries: quantiles('switchyard_request_duration_seconds', ROUTER, MODEL),
    },
    {
      title: 'TTFT SLO attainment by model',
      description: 'Share of streamed 2xx requests whose first token came within the TTFT SLO target variable (a bucket bound of the histogram).',
      unit: 'percentunit',
      min: 0,
      max: 1,
      queries: [
        {
          expr: `${sumRate(['model'], 'switchyard_time_to_first_token_seconds_bucket', ROUTER, MODEL, leMatcher('ttft_slo'))} / ${sumRate(['model'], 'switchyard_time_to_first_token_seconds_count', ROUTER, MODEL)}`,
          legend: '{{model}} within ${ttft_slo} s',
        },
      ],
    },
    {
      title: 'Cost of shedding and queueing',
      description: 'p99 time the router takes to answer a shed request (what shedding costs), and p95 time requests spend in the router queue.',
      unit: 's',
      queries: [
        { expr: quantile(0.99, 'switchyard_shed_duration_seconds', [], ROUTER), legend: 'shed answer p99' },
        { expr: quantile(0.95, 'switchyard_queue_wait_seconds', [], ROUTER), legend: 'queue wait p95' },
      ],
    },
  ],
};

const load: RowSpec = {
  title: 'In flight',
  panels: [
    {
      title: 'In flight per replica',
      description: 'Requests each router replica is handling; the total is the fleet-wide in-flight count.',
      unit: 'short',
      queries: [
        { expr: `${sumBy(['pod'])}(${series('switchyard_in_flight_requests', ROUTER)})`, legend: '{{pod}}' },
        { expr: `${sumBy([])}(${series('switchyard_in_flight_requests', ROUTER)})`, legend: 'all replicas' },
      ],
    },
    {
      title: 'In flight per engine (all replicas)',
      description: 'Requests the router replicas together have open to each engine: each replica counts only its own, so the sum is the fleet-wide number.',
      unit: 'short',
      queries: [{ expr: `${sumBy(['backend'])}(${series('switchyard_backend_in_flight_requests', ROUTER)})`, legend: '{{backend}}' }],
    },
  ],
};

const upstream: RowSpec = {
  title: 'Upstream health',
  panels: [
    {
      title: 'Retries by reason',
      description: 'Requests retried on another engine after a connect failure or a reset before any response byte.',
      unit: 'reqps',
      width: 8,
      queries: [{ expr: sumRate(['reason'], 'switchyard_retries_total', ROUTER), legend: '{{reason}}' }],
    },
    {
      title: 'Upstream errors by kind',
      description: 'Engine failures per second: connect, reset, timeout, midstream (after response bytes reached the client), status_5xx (passed through).',
      unit: 'ops',
      width: 8,
      queries: [{ expr: sumRate(['kind'], 'switchyard_upstream_errors_total', ROUTER), legend: '{{kind}}' }],
    },
    {
      title: 'Ejections',
      description: 'Ejections per engine in the interval (every replica ejects on its own, so they add up), and whether any replica has the engine ejected now.',
      unit: 'short',
      width: 8,
      queries: [
        { expr: `${sumBy(['backend'])}(increase(${series('switchyard_ejections_total', ROUTER)}[$__rate_interval]))`, legend: '{{backend}} ejections' },
        { expr: perBackend('max', 'switchyard_backend_ejected'), legend: '{{backend}} ejected now' },
      ],
    },
  ],
};

const routing: RowSpec = {
  title: 'Routing',
  panels: [
    {
      title: 'Routing decisions by policy and outcome',
      description: 'Decisions per second: affinity_hit, affinity_spill, no_key_fallback, prefix_hit, prefix_spill, prefix_fallback, lora_hit, lora_spill, pinned, assigned, placed, least_load, round_robin, by the scheduling profile that made them.',
      unit: 'ops',
      width: 24,
      queries: [{ expr: sumRate(['policy', 'outcome'], 'switchyard_policy_decisions_total', ROUTER), legend: '{{policy}} {{outcome}}' }],
    },
  ],
};

/** Counts over each replica's endpoint set, then the largest replica view (never summed across replicas). */
function endpointCount(metric: string, onlyOnes: boolean): string {
  return `max(${sumBy(['pod'])}(${series(metric, ROUTER)}${onlyOnes ? '' : ' >= bool 0'}))`;
}

const discovery: RowSpec = {
  title: 'Discovery and engine scrapes',
  panels: [
    {
      title: 'Endpoint set',
      description: "Endpoints in the set, routable ones (ready, not draining, model known), ejected ones, and ones whose load scrape is stale, per the replica whose view shows the most.",
      unit: 'short',
      queries: [
        { expr: endpointCount('switchyard_backend_routable', false), legend: 'known' },
        { expr: endpointCount('switchyard_backend_routable', true), legend: 'routable' },
        { expr: endpointCount('switchyard_backend_ejected', true), legend: 'ejected' },
        { expr: endpointCount('switchyard_backend_scrape_stale', true), legend: 'stale scrape' },
      ],
    },
    {
      title: 'Ready engines per model',
      description: 'Engines that can take the model\'s requests now (routable, not ejected), as the replica that sees the fewest reports it. 0 means the model is answered 503.',
      unit: 'short',
      min: 0,
      queries: [{ expr: `min by (model) (${series('switchyard_model_ready_endpoints', ROUTER, MODEL)})`, legend: '{{model}}' }],
    },
    {
      title: 'Engine scrape age',
      description: "Seconds since the last successful scrape of each engine's /metrics, the oldest any replica has. Past scrape.maxAgeMs the router routes on in-flight counts alone.",
      unit: 's',
      queries: [{ expr: perBackend('max', 'switchyard_backend_scrape_age_seconds'), legend: '{{backend}}' }],
    },
    {
      title: 'Engine scrape failures and duration',
      description: 'Failed scrapes per second per engine (all replicas), and the p99 duration of a scrape.',
      unit: 'short',
      queries: [
        { expr: sumRate(['backend'], 'switchyard_scrape_failures_total', ROUTER), legend: '{{backend}} failures/s' },
        { expr: quantile(0.99, 'switchyard_scrape_duration_seconds', [], ROUTER), legend: 'scrape p99 (s)' },
      ],
    },
    {
      title: 'Kubernetes discovery sources',
      description: 'Per Kubernetes source (pods or EndpointSlices): 1 while synced and its API calls succeed, the endpoints it reports, the objects it lists that give no endpoint (why: /debug/endpoints and the log), seconds since its last full list, and re-lists per second by reason. Static backends have no series here.',
      unit: 'short',
      width: 24,
      queries: [
        { expr: `min by (source, kind) (${series('switchyard_discovery_up', ROUTER)})`, legend: '{{source}} ({{kind}}) up' },
        { expr: `max by (source) (${series('switchyard_discovery_endpoints', ROUTER)})`, legend: '{{source}} endpoints' },
        { expr: `max by (source) (${series('switchyard_discovery_skipped_objects', ROUTER)})`, legend: '{{source}} skipped' },
        { expr: `time() - max by (source) (${series('switchyard_discovery_last_list_timestamp_seconds', ROUTER)})`, legend: '{{source}} s since list' },
        { expr: sumRate(['source', 'reason'], 'switchyard_discovery_restarts_total', ROUTER), legend: '{{source}} re-lists/s ({{reason}})' },
      ],
    },
  ],
};

const inferenceExtension: RowSpec = {
  title: 'Gateway API Inference Extension',
  panels: [
    {
      title: 'InferencePools: ready and endpoints',
      description:
        'Per InferencePool source and pool (namespace/name): ready is 1 while the pool is found at inference.networking.k8s.io/v1 with a usable selector and targetPorts, on the replica whose view is worst (0: absent, only at v1alpha2, or of a bad shape, and it gives no endpoints; /debug/endpoints discovery[].pool.problem says why); endpoints are what the pool gives, one per target port of each selected pod, on the replica that sees the most. No series without an inferencepool source.',
      unit: 'short',
      min: 0,
      queries: [
        { expr: `min by (source, pool) (${series('switchyard_inference_pool_ready', ROUTER, POOL)})`, legend: '{{pool}} ready ({{source}})' },
        { expr: `max by (source, pool) (${series('switchyard_inference_pool_endpoints', ROUTER, POOL)})`, legend: '{{pool}} endpoints ({{source}})' },
      ],
    },
    {
      title: 'Model rewrites by rule and target',
      description: 'Requests per second, all replicas, sent as another model by a rewrite rule (an InferenceModelRewrite namespace/name, or config/<name> from the configuration), by the model they were sent as.',
      unit: 'reqps',
      width: 6,
      queries: [{ expr: sumRate(['rewrite', 'target'], 'switchyard_model_rewrites_total', ROUTER), legend: '{{rewrite}} → {{target}}' }],
    },
    {
      title: 'Unknown inference objectives',
      description: 'Requests per second, all replicas, whose x-gateway-inference-objective header (from a trusted proxy) named no InferenceObjective of any watched pool: they ran at normal priority. A steady rate means a gateway or client names an objective that does not exist (misspelt, deleted, or in a pool the router does not watch).',
      unit: 'reqps',
      width: 6,
      queries: [{ expr: sumRate([], 'switchyard_inference_objective_unknown_total', ROUTER), legend: 'unknown objective' }],
    },
  ],
};

/** The value each replica reports about itself, one series per replica. */
function perReplica(how: 'max' | 'min', metric: string): string {
  return `${how} by (pod) (${series(metric, ROUTER)})`;
}

const sharedState: RowSpec = {
  title: 'Shared state (Redis)',
  panels: [
    {
      title: 'Shared state up per replica',
      description: '1 while a replica reaches Redis, 0 while it is degraded and routes on its own state (sessions may scatter, quotas are divided by the replica count last seen). No series for replicas without Redis configured.',
      unit: 'short',
      width: 8,
      min: 0,
      max: 1,
      queries: [{ expr: perReplica('min', 'switchyard_shared_state_up'), legend: '{{pod}}' }],
    },
    {
      title: 'Redis command latency p99 by command',
      description: 'p99 time Redis took to answer each kind of command, across all replicas (answered commands only; a command past redis.commandTimeoutMs counts as a failure instead).',
      unit: 's',
      width: 8,
      queries: [{ expr: quantile(0.99, 'switchyard_shared_state_command_duration_seconds', ['command'], ROUTER), legend: '{{command}}' }],
    },
    {
      title: 'Redis command failures by kind',
      description: 'Redis commands per second that got no answer, by kind: timeout, connection, server (an error answer such as OOM or NOPERM: Redis is alive, so it does not open the breaker), invalid_reply (an answer of the wrong shape or size, dropped), breaker_open (not sent: the circuit breaker was open). Each one was a decision made on local state.',
      unit: 'ops',
      width: 8,
      queries: [{ expr: sumRate(['kind'], 'switchyard_shared_state_failures_total', ROUTER), legend: '{{kind}}' }],
    },
    {
      title: 'Circuit breaker transitions',
      description: 'Transitions of the replicas\' Redis circuit breakers in the interval, by the state entered: open (commands kept failing), half-open (one trial command), closed (Redis answers again).',
      unit: 'short',
      width: 8,
      queries: [{ expr: `${sumBy(['to'])}(increase(${series('switchyard_shared_state_breaker_transitions_total', ROUTER)}[$__rate_interval]))`, legend: '{{to}}' }],
    },
    {
      title: 'Fleet replicas seen through Redis',
      description: 'Router replicas whose in-flight counts each replica found live in Redis at its last read, against the replicas Prometheus scrapes. A replica that sees fewer is missing the others\' load.',
      unit: 'short',
      width: 8,
      min: 0,
      queries: [
        { expr: perReplica('max', 'switchyard_fleet_replicas'), legend: '{{pod}} sees' },
        { expr: `count(${series('switchyard_in_flight_requests', ROUTER)})`, legend: 'scraped replicas' },
      ],
    },
    {
      title: 'Fleet load age',
      description: "Age of the other replicas' in-flight counts each replica routes on now (redis.publishIntervalMs adds to it). Growing ages mean the fleet view is going stale.",
      unit: 's',
      width: 8,
      queries: [{ expr: perReplica('max', 'switchyard_fleet_load_age_seconds'), legend: '{{pod}}' }],
    },
    {
      title: 'Background failures by task',
      description:
        'Failures nobody was waiting for, in the interval, by pod and task: a shared-state background task (fleet_publish, safe_start_share, quota_refresh, session_write, prefix_placement_write) or the process-level net (unhandled_rejection, uncaught_exception). The router logged each one and kept running; any is a bug to report (see the SwitchyardBackgroundFailures runbook).',
      unit: 'short',
      width: 24,
      queries: [{ expr: `${sumBy(['pod', 'task'])}(increase(${series('switchyard_background_failures_total', ROUTER)}[$__rate_interval]))`, legend: '{{pod}} {{task}}' }],
    },
  ],
};

const sessionsAndKeys: RowSpec = {
  title: 'Sessions, quotas and API keys',
  panels: [
    {
      title: 'Session moves by reason',
      description: 'Sessions moved off their assigned engine per second, all replicas, by why the engine failed the scheduling filters: saturated, ejected, gone. Every replica follows the recorded move.',
      unit: 'ops',
      width: 6,
      queries: [{ expr: sumRate(['reason'], 'switchyard_session_moves_total', ROUTER), legend: '{{reason}}' }],
    },
    {
      title: 'Session and prefix placement lookups',
      description: "Shared assignment lookups per second, by result: cache (the replica's recent copy), redis, miss (a new session or group), unavailable (Redis degraded: rendezvous hashing, or the replica's own placement, decided). Sessions by key; prefix groups for keyless prompts the prefix walk places (prefix affinity).",
      unit: 'ops',
      width: 6,
      queries: [
        { expr: sumRate(['result'], 'switchyard_session_lookups_total', ROUTER), legend: 'session {{result}}' },
        { expr: sumRate(['result'], 'switchyard_prefix_placement_lookups_total', ROUTER), legend: 'prefix group {{result}}' },
      ],
    },
    {
      title: 'Quota rejections by tenant',
      description: 'Requests refused with 429 for their tenant quota per second, all replicas, by tenant and limit (rate, concurrency).',
      unit: 'reqps',
      width: 6,
      queries: [{ expr: sumRate(['tenant', 'limit'], 'switchyard_quota_rejections_total', ROUTER), legend: '{{tenant}} {{limit}}' }],
    },
    {
      title: 'Authentication failures',
      description: 'Traffic-port requests refused with 401 per second, all replicas, by reason: missing (no key) or invalid (unknown key). Only with API keys configured.',
      unit: 'reqps',
      width: 6,
      queries: [{ expr: sumRate(['reason'], 'switchyard_auth_failures_total', ROUTER), legend: '{{reason}}' }],
    },
  ],
};

const replicas: RowSpec = {
  title: 'Router replicas',
  panels: [
    {
      title: 'Replicas by version',
      description: 'Router replicas Prometheus currently scrapes, per version they run (switchyard_build_info): two versions during a rollout.',
      unit: 'short',
      kind: 'stat',
      width: 4,
      queries: [{ expr: `count by (version) (${series('switchyard_build_info', ROUTER)})`, legend: '{{version}}' }],
    },
    {
      title: 'Event-loop lag per replica',
      description: 'Event-loop lag each replica measures for shedding (admission.eventLoopLagMs sheds above it).',
      unit: 's',
      width: 10,
      queries: [{ expr: `max by (pod) (${series('switchyard_event_loop_lag_seconds', ROUTER)})`, legend: '{{pod}}' }],
    },
    {
      title: 'Client connections per replica',
      description: 'Open client connections on each replica\'s traffic port.',
      unit: 'short',
      width: 10,
      queries: [{ expr: `${sumBy(['pod'])}(${series('switchyard_open_connections', ROUTER)})`, legend: '{{pod}}' }],
    },
    {
      title: 'CPU per replica',
      description: 'CPU seconds per second each replica uses.',
      unit: 'percentunit',
      queries: [{ expr: sumRate(['pod'], 'process_cpu_seconds_total', ROUTER), legend: '{{pod}}' }],
    },
    {
      title: 'Memory per replica',
      description: 'Resident memory and V8 heap in use per replica (compare with the container memory limit).',
      unit: 'bytes',
      queries: [
        { expr: `${sumBy(['pod'])}(${series('process_resident_memory_bytes', ROUTER)})`, legend: '{{pod}} resident' },
        { expr: `${sumBy(['pod'])}(${series('nodejs_heap_size_used_bytes', ROUTER)})`, legend: '{{pod}} heap used' },
      ],
    },
  ],
};

/** The router overview dashboard. */
export function routerOverview(): DashboardSpec {
  return {
    uid: 'switchyard-router',
    title: 'switchyard / Router',
    description: 'switchyard router replicas: traffic, shedding, router-observed latency, in-flight work, upstream health, routing, discovery, the Gateway API Inference Extension (InferencePools, model rewrites, objectives), shared state (Redis), sessions, quotas and API keys.',
    variables: [datasourceVariable(), ...routerVariables(), poolVariable(), ttftSloVariable()],
    rows: [traffic, latency, load, upstream, routing, discovery, inferenceExtension, sharedState, sessionsAndKeys, replicas],
  };
}

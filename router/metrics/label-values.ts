/**
 * The values of the metric labels whose producers sit above the metrics layer
 * (admission, shared state, the request path): each declared once here, as a
 * const array and its union, so the code that emits a value and the help text
 * that lists them cannot drift apart. Producers below metrics keep their own
 * (router/load's upstream failure kinds, router/scheduling's decision
 * outcomes, assignment moves and priorities), and metrics imports those.
 */
import type { UpstreamFailureKind } from '../load/upstream-failure-kinds.ts';

/** Router-wide limits that shed a request before its body is read (router/admission/router-pressure.ts). */
export const PRESSURE_REASONS = ['in_flight_cap', 'connection_cap', 'event_loop_lag'] as const;
/** One of {@link PRESSURE_REASONS}. */
export type PressureReason = (typeof PRESSURE_REASONS)[number];

/** Why a request was shed with 429; the `reason` label of `switchyard_shed_total`. */
export const SHED_REASONS = ['saturated', 'queue_full', 'queue_timeout', ...PRESSURE_REASONS, 'body_budget'] as const;
/** One of {@link SHED_REASONS}. */
export type ShedReason = (typeof SHED_REASONS)[number];

/** Why a request was retried on another endpoint: only failures before any response byte; the `reason` label of `switchyard_retries_total`. */
export const RETRY_REASONS = ['connect', 'reset'] as const satisfies readonly UpstreamFailureKind[];
/** One of {@link RETRY_REASONS}. */
export type RetryReason = (typeof RETRY_REASONS)[number];

/** The shared state's background tasks (router/state/background-task.ts). */
export const SHARED_STATE_TASKS = ['fleet_publish', 'safe_start_share', 'quota_refresh', 'session_write', 'prefix_placement_write'] as const;
/** The process-level net: failures no task caught. */
export const PROCESS_FAILURES = ['unhandled_rejection', 'uncaught_exception'] as const;
/** The `task` values of `switchyard_background_failures_total`. */
export const BACKGROUND_TASKS = [...SHARED_STATE_TASKS, ...PROCESS_FAILURES] as const;
/** One of {@link BACKGROUND_TASKS}. */
export type BackgroundTask = (typeof BACKGROUND_TASKS)[number];

/**
 * Why a Redis command got no answer; the `kind` label of
 * `switchyard_shared_state_failures_total`. `server`: Redis answered with an
 * error; `invalid_reply`: an answer whose shape or size the caller does not
 * accept (treated as no answer); `breaker_open`: not sent at all.
 */
export const COMMAND_FAILURES = ['timeout', 'connection', 'server', 'invalid_reply', 'breaker_open'] as const;
/** One of {@link COMMAND_FAILURES}. */
export type CommandFailure = (typeof COMMAND_FAILURES)[number];

/** The Redis circuit breaker's states; `half-open` lets one trial command through. The `to` label of its transitions. */
export const BREAKER_STATES = ['open', 'half-open', 'closed'] as const;
/** One of {@link BREAKER_STATES}. */
export type BreakerState = (typeof BREAKER_STATES)[number];

/** Where a session's assignment (or a prefix group's shared placement) came from; the `result` label of `switchyard_session_lookups_total` and `switchyard_prefix_placement_lookups_total`. */
export const SESSION_LOOKUP_RESULTS = ['cache', 'redis', 'miss', 'unavailable'] as const;
/** One of {@link SESSION_LOOKUP_RESULTS}. */
export type SessionLookupResult = (typeof SESSION_LOOKUP_RESULTS)[number];

/** The tenant limit that refused a request; the `limit` label of `switchyard_quota_rejections_total`. */
export const QUOTA_LIMITS = ['rate', 'concurrency'] as const;
/** One of {@link QUOTA_LIMITS}. */
export type QuotaLimit = (typeof QUOTA_LIMITS)[number];

/** Why the traffic port refused a request with 401; the `reason` label of `switchyard_auth_failures_total`. */
export const AUTH_FAILURE_REASONS = ['missing', 'invalid'] as const;
/** One of {@link AUTH_FAILURE_REASONS}. */
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

/**
 * A label's values as a help text lists them, in their declared order:
 * `a, b, c (what c means)`. Help texts are built from the const arrays with
 * this, so a value added to a union shows up in the help by itself.
 */
export function listLabelValues<V extends string>(values: readonly V[], notes: Partial<Record<V, string>> = {}): string {
  return values.map((value) => (notes[value] === undefined ? value : `${value} (${notes[value]})`)).join(', ');
}

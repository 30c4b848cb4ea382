/**
 * How an upstream request can fail, as the proxy reports it to the load view.
 * A leaf of its own: the proxy classifies, the endpoint's health and the
 * ejection policy count, and metrics label series with the same values.
 */

/** Upstream failure kinds the proxy reports; also the metric label values. */
export const UPSTREAM_FAILURE_KINDS = ['connect', 'reset', 'timeout', 'midstream', 'status_5xx'] as const;
/** One of {@link UPSTREAM_FAILURE_KINDS}. */
export type UpstreamFailureKind = (typeof UPSTREAM_FAILURE_KINDS)[number];

/**
 * The router's own health, which is all `/livez` and `/readyz` ever report.
 *
 * Liveness: the event loop runs (answering at all proves it).
 * Readiness: configuration loaded, discovery produced its first endpoint set
 * (even an empty one), and not draining. Backend health and count never
 * count: failing readiness on a backend outage would pull every router
 * replica out of its Service at once and turn an outage into connection
 * refusals, where a 503 with Retry-After is the better answer.
 */
export interface ReadinessState {
  /** Discovery has produced at least one endpoint set. */
  readonly discoverySynced: boolean;
  /** SIGTERM received: readiness fails at once. */
  readonly draining: boolean;
  /**
   * Shared state (Redis): shown in the body, never counted. A degraded Redis
   * means routing on local state, which every replica can still do.
   */
  readonly sharedState?: 'off' | 'up' | 'degraded';
}

/** Status and JSON body for `/readyz`. */
export function readiness(state: ReadinessState): { status: 200 | 503; body: { ready: boolean; reason?: string; sharedState?: 'up' | 'degraded' } } {
  const detail = state.sharedState === undefined || state.sharedState === 'off' ? {} : { sharedState: state.sharedState };
  if (state.draining) return { status: 503, body: { ready: false, reason: 'draining', ...detail } };
  if (!state.discoverySynced) return { status: 503, body: { ready: false, reason: 'discovery not synced', ...detail } };
  return { status: 200, body: { ready: true, ...detail } };
}

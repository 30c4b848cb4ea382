/**
 * Scheduling: the routing profiles (today's policy names are presets of
 * them) and the scheduler that picks an endpoint with them from the load
 * view.
 */
import type { Config } from '../config/schema.ts';
import type { EndpointState } from '../load/endpoint-state.ts';
import { noteAdapterSent } from '../load/extractors/lora-requests-info.ts';
import type { LoadView } from '../load/load-view.ts';
import type { RouterMetrics } from '../metrics/metrics.ts';
import type { SharedStateMetrics } from '../metrics/shared-state-metrics.ts';
import { ProfileRegistry } from '../scheduling/profiles/presets.ts';
import { Scheduler } from '../scheduling/scheduler.ts';

/** The profiles (which the request path asks whether a model's profile hashes the prompt prefix) and the scheduler. */
export interface Scheduling {
  readonly profiles: ProfileRegistry;
  readonly scheduler: Scheduler<EndpointState>;
}

/** What {@link buildScheduling} reads and counts into. */
export interface SchedulingDeps {
  readonly view: LoadView;
  readonly metrics: RouterMetrics;
  readonly sharedMetrics: SharedStateMetrics;
}

/** Builds the profiles `config.routing` names and the scheduler over them. */
export function buildScheduling(config: Config, deps: SchedulingDeps): Scheduling {
  const { metrics, sharedMetrics } = deps;
  const profiles = new ProfileRegistry(config.routing, Math.random);
  const scheduler = new Scheduler<EndpointState>({
    view: deps.view,
    profiles,
    thresholds: { ...config.admission, maxInFlightPerEndpoint: perEndpointCap(config.admission.maxInFlightPerEndpoint, config.upstream.connectionsPerEndpoint) },
    countDecision: (policy, outcome) => metrics.countDecision(policy, outcome),
    countMove: (reason) => sharedMetrics.countSessionMove(reason),
    adapterSent: (target, adapter) => {
      noteAdapterSent(target.attributes, adapter);
      metrics.lora.countRequest(target, adapter);
    },
  });
  return { profiles, scheduler };
}

/**
 * The in-flight count at which an endpoint is saturated: the configured
 * admission cap, lowered to the upstream connection cap when that is set.
 * A request over the connection cap would otherwise wait inside the HTTP
 * client for a connection to free up: forwarded as far as the load view
 * knows, but invisible to the engine's queue metrics and to shedding.
 */
export function perEndpointCap(admissionCap: number, connectionsPerEndpoint: number | undefined): number {
  if (connectionsPerEndpoint === undefined) return admissionCap;
  return admissionCap > 0 ? Math.min(admissionCap, connectionsPerEndpoint) : connectionsPerEndpoint;
}

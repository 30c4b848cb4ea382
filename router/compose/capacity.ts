/**
 * What the router may hold at once: the caps fitted to the open-file limit,
 * the wait queue, the client connections, the buffered body bytes, the open
 * requests, and the upstream connection pools.
 */
import { Agent } from 'undici';
import { EventLoopLagMonitor } from '../admission/event-loop-lag.ts';
import { fitToFileLimit, type FittedLimits } from '../admission/router-pressure.ts';
import { WaitQueue } from '../admission/wait-queue.ts';
import type { Config } from '../config/schema.ts';
import type { EndpointState } from '../load/endpoint-state.ts';
import type { LoadView } from '../load/load-view.ts';
import { BodyBudget } from '../request/body-budget.ts';
import { ConnectionGuard } from '../server/connection-guard.ts';
import { OpenRequests } from './open-requests.ts';

/** The router's shared limits and pools; the router starts and stops the lag monitor and destroys both agents. */
export interface Capacity {
  /** Connection and in-flight caps, and the admin port's, lowered to fit the open-file limit. */
  readonly fitted: FittedLimits;
  /** Requests waiting for an engine with room. */
  readonly queue: WaitQueue<EndpointState>;
  /** Client connections on the traffic port, in total and per client. */
  readonly connections: ConnectionGuard;
  /** Request body bytes buffered at once. */
  readonly bodyBudget: BodyBudget;
  /** Requests open on the traffic port. */
  readonly openRequests: OpenRequests;
  readonly lag: EventLoopLagMonitor;
  /** Connections to engines for request traffic. */
  readonly upstream: Agent;
  /** Connections to engines for model probes and scrapes. */
  readonly probeAgent: Agent;
}

/** Builds the limits and pools; `lagMonitor` replaces the default monitor (tests). A limit the view raises wakes the queue. */
export function buildCapacity(config: Config, view: LoadView, lagMonitor: EventLoopLagMonitor | undefined): Capacity {
  const queue = new WaitQueue<EndpointState>({
    maxLength: config.admission.queueLength,
    maxWaitMs: config.admission.queueMaxWaitMs,
    tenantShare: config.admission.tenantQueueShare,
  });
  view.onRoomOpened = () => queue.notify();
  const fitted = fitToFileLimit(config.admission, { adminConnections: config.adminMaxConnections });
  return {
    fitted,
    queue,
    connections: new ConnectionGuard({ maxConnections: fitted.limits.maxConnections, maxPerClient: config.server.maxConnectionsPerClient }),
    bodyBudget: new BodyBudget(config.server.bodyBudgetBytes),
    openRequests: new OpenRequests(queue),
    lag: lagMonitor ?? new EventLoopLagMonitor(),
    upstream: new Agent({
      connections: config.upstream.connectionsPerEndpoint ?? fitted.limits.maxInFlight,
      connect: { timeout: config.timeouts.connectMs },
      pipelining: 1,
    }),
    // Model probes and scrapes share one small pool, apart from request traffic.
    probeAgent: new Agent({ connections: 2, connect: { timeout: config.timeouts.connectMs } }),
  };
}

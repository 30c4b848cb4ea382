/**
 * The router's servers: the traffic port (inference routes through the
 * request path, everything else through the control app), the admin port
 * (probes, metrics, /debug/endpoints), and the drain that readiness and the
 * traffic listener read.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Scraper } from '../load/scraper.ts';
import type { LoadView } from '../load/load-view.ts';
import type { Logger } from '../log.ts';
import type { RouterMetrics } from '../metrics/metrics.ts';
import { createAdminApp } from '../server/admin-app.ts';
import { AdminPort } from '../server/admin-port.ts';
import { adapterErrorResponse, createControlApp } from '../server/control-app.ts';
import { debugEndpointsDocument } from '../server/debug-endpoints.ts';
import { Drain } from '../server/drain.ts';
import type { ReadinessState } from '../server/health.ts';
import { createHttpServer } from '../server/http-server.ts';
import { answerer, createTrafficListener } from '../server/traffic-listener.ts';
import type { Config } from '../config/schema.ts';
import type { Capacity } from './capacity.ts';
import type { Discovery } from './discovery.ts';
import type { InferenceExtension } from './inference-extension.ts';
import type { Load } from './load.ts';
import type { RequestPath } from './request-path.ts';
import type { SharedState } from './shared-state.ts';

/** The servers, neither listening yet; the router binds, drains and closes them. */
export interface Servers {
  /** The traffic port's server. */
  readonly traffic: Server;
  readonly admin: AdminPort;
  /** SIGTERM drain state: readiness fails once draining; responses close their connections once closing. */
  readonly drain: Drain;
}

/** What {@link buildServers} serves and reports. */
export interface ServersDeps {
  readonly logger: Logger;
  /** The admin port's bearer token; undefined: open. */
  readonly adminToken: string | undefined;
  readonly load: Load;
  readonly capacity: Capacity;
  readonly discovery: Discovery;
  /** Model rewrites and InferenceObjective priorities, for /debug/endpoints. */
  readonly inferenceExtension: InferenceExtension;
  readonly metrics: RouterMetrics;
  readonly shared: SharedState;
  readonly scraper: Scraper;
  readonly requestPath: RequestPath;
}

/** Builds both servers and the drain; nothing listens until the router binds them. */
export function buildServers(config: Config, deps: ServersDeps): Servers {
  const { view } = deps.load;
  const drain = new Drain();
  const readiness = (): ReadinessState => ({ discoverySynced: view.synced, draining: drain.draining, sharedState: deps.shared.redis?.store.status ?? 'off' });
  const traffic = trafficServer(config, deps, drain, readiness);
  const admin = createAdminApp({ registry: deps.metrics.registry, debugEndpoints: () => debugEndpoints(view, deps) });
  const adminPort = new AdminPort({
    address: config.adminListen,
    livenessStallMs: config.lifecycle.livenessStallMs,
    fetch: admin.fetch,
    readiness,
    token: deps.adminToken,
    maxConnections: deps.capacity.fitted.adminConnections,
  });
  return { traffic, admin: adminPort, drain };
}

/** The traffic port: inference routes through the request lifecycle, the rest (models, health) through the control app, behind the tenant gate when API keys are on. */
function trafficServer(config: Config, deps: ServersDeps, drain: Drain, readiness: () => ReadinessState): Server {
  const { connections } = deps.capacity;
  const { tenants } = deps.requestPath;
  const control = createControlApp({
    routableModels: () => deps.load.view.routableModels(),
    adapterParent: (model) => deps.load.view.adapterParent(model),
    readiness,
    startedAtS: Math.floor(Date.now() / 1000),
  });
  const listener = createTrafficListener({
    lifecycle: deps.requestPath.lifecycle,
    connections,
    closing: () => drain.closing,
    fallback: tenants === undefined ? nodeListener(control.fetch) : tenants.guardLocalRoutes(nodeListener(control.fetch), answerer),
  });
  const onServerError = (err: Error) => deps.logger.error({ err: err.message }, 'server error (the router keeps running)');
  const traffic = createHttpServer(config.server, listener, onServerError);
  traffic.on('connection', (socket: Socket) => connections.accept(socket));
  return traffic;
}

/** The /debug/endpoints document: the view's endpoints with their probe, scrape and session details, discovery and the replica count. */
function debugEndpoints(view: LoadView, deps: ServersDeps): unknown {
  const { discovery, scraper } = deps;
  const { replicas, replicaWatch } = deps.load;
  return debugEndpointsDocument(view, deps.capacity.openRequests.count, {
    modelProbe: (endpoint) => discovery.probe.status(endpoint.url, endpoint.source),
    discovery: () => discovery.kubernetes?.debugStatus() ?? [],
    inferenceExtension: () => deps.inferenceExtension.debugStatus(),
    replicas: () => ({ count: replicas.value ?? null, source: replicas.source, watch: replicaWatch?.debugStatus() ?? null }),
    scrapeFailure: (state) => scraper.failure(state),
    scrapeDialect: (state) => scraper.dialect(state),
    sessionsByEndpoint: () => deps.shared.redis?.sessions.sessionsByEngine(),
  });
}

/** Adapts a Hono app to a Node listener; the adapter answers its own errors, so its promise is not awaited. */
function nodeListener(fetch: Parameters<typeof getRequestListener>[0]): (req: IncomingMessage, res: ServerResponse) => void {
  // HTTP/1.0 requests may come without Host (HTTP/1.1 ones without it are refused before this).
  const listener = getRequestListener(fetch, { overrideGlobalObjects: false, hostname: 'localhost', errorHandler: adapterErrorResponse });
  return (req, res) => void listener(req, res);
}

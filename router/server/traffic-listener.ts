/**
 * The request listener of the traffic port. Inference POSTs take the fast
 * path straight to routing and the forwarder on the raw Node request and
 * response (the design's measurements show Web-stream conversion costs a
 * third of the throughput); everything else goes to the Hono control app.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwitchyardError, toSwitchyardError } from '../errors/errors.ts';
import { sendError } from '../errors/send-error.ts';
import type { AdmissionControl } from '../admission/admission-control.ts';
import { requestPriority } from '../admission/priority.ts';
import type { EndpointState } from '../load/load-view.ts';
import type { RequestFacts } from '../policy/policy.ts';
import type { ForwardRequest } from '../proxy/forwarder.ts';
import { acceptableRequestId, upstreamRequestHeaders } from '../proxy/headers.ts';
import type { BodyBudget, BodyReservation } from './body-budget.ts';
import type { ConnectionGuard } from './connection-guard.ts';
import { JsonBodyScanner } from './json-body-scanner.ts';
import { closeAfterAnswer } from './lingering-close.ts';
import { ClientGoneError, readBody } from './read-body.ts';
import type { SlowBodyWatch } from './slow-body-watch.ts';
import { INFERENCE_ROUTES, originFormOf, pathOf, type InferenceRoute } from './routes.ts';
import { multipartBodyFacts, type BodyFacts } from './routing-facts.ts';

/** The load view as the listener reads it. */
export interface RoutingView {
  knowsModel(model: string): boolean;
  routableModels(): readonly string[];
}

/** Collaborators of the traffic listener. */
export interface TrafficListenerDeps {
  readonly view: RoutingView;
  /** Router-wide pressure, policy, saturation, queue: which endpoints to try, or why not. */
  readonly admission: AdmissionControl<EndpointState>;
  readonly priorityHeader: string;
  /** True when the socket address belongs to a trusted proxy (`server.trustedProxies`), whose priority header counts. */
  readonly trustedClient: (address: string | undefined) => boolean;
  readonly forward: (request: ForwardRequest) => void;
  readonly countRequest: (route: string, model: string, status: number) => void;
  /** Records how long the router took to answer a request it shed (seconds). */
  readonly observeShed: (seconds: number) => void;
  /** Counts a request shed by the listener itself (the body budget), by reason. */
  readonly countShed: (reason: 'body_budget', priority: string) => void;
  /** Router-wide budget of bytes held by buffered request bodies. */
  readonly bodyBudget: BodyBudget;
  /** Cuts request bodies that arrive too slowly. */
  readonly slowBodies: SlowBodyWatch;
  /** Connection idleness and per-client shares. */
  readonly connections: Pick<ConnectionGuard, 'begin'>;
  /** Router-wide in-flight accounting. */
  readonly inFlight: { increment(): void; decrement(): void };
  /** True once the router stopped accepting: responses then close their connection. */
  readonly closing: () => boolean;
  readonly fallback: (req: IncomingMessage, res: ServerResponse) => void;
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly maxJsonDepth: number;
    /** Bytes of canonical prompt prefix the body scan keeps (0: none). */
    readonly promptPrefixBytes: number;
  };
  readonly requestIdHeader: string;
  readonly sessionHeader: string;
  /** Use the body's `user` field as the session key when the header is absent. */
  readonly sessionFromUser: boolean;
  readonly defaultModel: string | undefined;
}

/** The signal for requests that cannot queue: admission never waits for them. */
const NEVER_ABORTED = new AbortController().signal;

/** Builds the traffic port's request listener. */
export function createTrafficListener(deps: TrafficListenerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (deps.closing()) res.shouldKeepAlive = false;
    if (!deps.connections.begin(req, res)) {
      closeAfterAnswer(req, res);
      sendError(res, new SwitchyardError('SWITCHYARD_ROUTER_BUSY', 'This client holds too many connections; retry on an open one.', { retryAfterSeconds: 1 }), [
        'connection',
        'close',
      ]);
      return;
    }
    const route = req.method === 'POST' ? INFERENCE_ROUTES.get(pathOf(req.url ?? '/')) : undefined;
    if (route === undefined) {
      deps.fallback(req, res);
      return;
    }
    void handleInference(deps, route, req, res);
  };
}

async function handleInference(deps: TrafficListenerDeps, route: InferenceRoute, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const arrivedAt = performance.now();
  const requestId = acceptableRequestId(req.headers[deps.requestIdHeader]) ?? randomUUID();
  // Only a trusted proxy may set the priority (later also an authenticated key's class: see requestPriority).
  const trusted = deps.trustedClient(req.socket.remoteAddress);
  const priority = requestPriority(req.headers[deps.priorityHeader], trusted);
  const pressure = deps.admission.checkPressure(priority);
  if (pressure !== undefined) {
    // Shed before reading the body; the connection closes after the answer, lingering while the
    // client still sends, so the close cannot turn into a reset that hides the 429.
    closeAfterAnswer(req, res);
    sendError(res, pressure, [deps.requestIdHeader, requestId, 'connection', 'close']);
    deps.countRequest(route.path, 'unknown', pressure.status);
    deps.observeShed((performance.now() - arrivedAt) / 1000);
    return;
  }
  deps.inFlight.increment();
  const reservation = deps.bodyBudget.open();
  let modelLabel = 'unknown';
  try {
    const bodyFacts = await readFacts(deps, route, req, reservation);
    const body = bodyFacts.body;
    const model = bodyFacts.model ?? defaultModel(deps);
    if (!deps.view.knowsModel(model)) {
      throw new SwitchyardError('SWITCHYARD_MODEL_NOT_FOUND', `The model \`${model}\` does not exist.`, { param: 'model' });
    }
    modelLabel = model;
    const facts: RequestFacts = {
      model,
      stream: bodyFacts.stream,
      sessionKey: sessionKeyOf(req.headers[deps.sessionHeader]) ?? (deps.sessionFromUser ? bodyFacts.user : undefined),
      bodyBytes: body.length,
    };
    // Only a request that may wait in the queue needs to hear that its client left meanwhile.
    let decision;
    if (deps.admission.mayQueue) {
      const clientGone = new AbortController();
      const onClose = () => clientGone.abort();
      res.once('close', onClose);
      decision = await deps.admission.admit(facts, priority, clientGone.signal);
      res.off('close', onClose);
    } else {
      decision = await deps.admission.admit(facts, priority, NEVER_ABORTED);
    }
    if (decision.kind === 'gone') throw new ClientGoneError('client left while queued');
    if (decision.kind === 'reject') throw decision.error;
    const headers = upstreamRequestHeaders(req.rawHeaders, {
      clientAddress: req.socket.remoteAddress,
      trustedClient: trusted,
      requestIdHeader: deps.requestIdHeader,
      requestId,
    });
    const label = modelLabel;
    deps.forward({
      res,
      path: originFormOf(req.url ?? route.path),
      headers,
      // Which Authorization an engine gets depends on its source: the forwarder decides per attempt.
      clientAuthorization: req.headers.authorization,
      body,
      stream: facts.stream,
      requestId,
      attempts: decision.attempts,
      route: route.path,
      modelLabel: label,
      arrivedAt,
      onDone: (status) => {
        reservation.release();
        deps.inFlight.decrement();
        deps.countRequest(route.path, label, status);
      },
    });
  } catch (err) {
    reservation.release();
    deps.inFlight.decrement();
    if (err instanceof ClientGoneError) {
      res.destroy();
      deps.countRequest(route.path, modelLabel, 0);
      return;
    }
    const error = toSwitchyardError(err);
    // The rest of the body stays unread: close after the answer, lingering while the client sends.
    if (!req.complete) closeAfterAnswer(req, res);
    sendError(res, error, [deps.requestIdHeader, requestId]);
    deps.countRequest(route.path, modelLabel, error.status);
    if (error.code === 'SWITCHYARD_BODY_BUDGET') deps.countShed('body_budget', priority);
    if (error.status === 429) deps.observeShed((performance.now() - arrivedAt) / 1000);
  }
}

/**
 * Reads the body within the limits and the budget, and the facts routing needs from it. A JSON
 * body is scanned chunk by chunk as it arrives, so a bad one is refused at its first bad byte.
 */
async function readFacts(
  deps: TrafficListenerDeps,
  route: InferenceRoute,
  req: IncomingMessage,
  reservation: BodyReservation,
): Promise<BodyFacts & { body: Buffer }> {
  const limit = deps.limits.maxBodyBytes;
  if (route.body === 'multipart') {
    const contentType = req.headers['content-type'] ?? '';
    if (!/^multipart\/form-data/i.test(contentType)) {
      throw new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'This route takes a multipart/form-data body.');
    }
    const body = await readBody(req, { limit, reservation, slowBodies: deps.slowBodies });
    return { ...multipartBodyFacts(body, contentType), body };
  }
  const scanner = new JsonBodyScanner({ maxDepth: deps.limits.maxJsonDepth, promptPrefixBytes: deps.limits.promptPrefixBytes });
  const body = await readBody(req, { limit, reservation, slowBodies: deps.slowBodies, inspect: (chunk) => scanner.push(chunk) });
  return { ...scanner.finish(body), body };
}

function defaultModel(deps: TrafficListenerDeps): string {
  if (deps.defaultModel !== undefined) return deps.defaultModel;
  const models = deps.view.routableModels();
  if (models.length === 1) return models[0] as string;
  throw new SwitchyardError('SWITCHYARD_MISSING_MODEL', 'The request must name a `model`.', { param: 'model' });
}

function sessionKeyOf(value: string | string[] | undefined): string | undefined {
  const key = Array.isArray(value) ? value[0] : value;
  return key === undefined || key === '' ? undefined : key;
}

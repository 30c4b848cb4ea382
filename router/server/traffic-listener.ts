/**
 * The request listener of the traffic port: HTTP matters only. It applies
 * the connection guard, sends inference POSTs down the request lifecycle
 * (router/request/lifecycle.ts) on the raw Node request and response (the
 * design's measurements show Web-stream conversion costs a third of the
 * throughput), answers the lifecycle's refusals, and hands everything else
 * to the Hono control app.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwitchyardError } from '../errors/errors.ts';
import { sendError } from '../errors/error-answer.ts';
import type { Answerer, RequestLifecycle } from '../request/lifecycle.ts';
import type { ConnectionGuard } from './connection-guard.ts';
import { closeAfterAnswer } from './lingering-close.ts';
import { pathOf } from '../request/request-target.ts';
import { INFERENCE_ROUTES, originFormOf } from './routes.ts';

/** Collaborators of the traffic listener. */
export interface TrafficListenerDeps {
  readonly lifecycle: Pick<RequestLifecycle, 'run'>;
  /** Connection idleness and per-client shares. */
  readonly connections: Pick<ConnectionGuard, 'begin'>;
  /** True once the router stopped accepting: responses then close their connection. */
  readonly closing: () => boolean;
  readonly fallback: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * How the router writes its own error answers. A refusal that leaves body
 * bytes unread closes the connection after the answer, lingering while the
 * client still sends, so the close cannot turn into a reset that hides the answer.
 */
export const answerer: Answerer = {
  error(req, res, error, headers, close) {
    if (close) closeAfterAnswer(req, res);
    sendError(res, error, headers);
  },
};

/** Builds the traffic port's request listener. */
export function createTrafficListener(deps: TrafficListenerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (deps.closing()) res.shouldKeepAlive = false;
    if (!deps.connections.begin(req, res)) {
      const error = new SwitchyardError('SWITCHYARD_ROUTER_BUSY', 'This client holds too many connections; retry on an open one.', { retryAfterSeconds: 1 });
      answerer.error(req, res, error, ['connection', 'close'], true);
      return;
    }
    const route = req.method === 'POST' ? INFERENCE_ROUTES.get(pathOf(req.url ?? '/')) : undefined;
    if (route === undefined) {
      deps.fallback(req, res);
      return;
    }
    void deps.lifecycle.run(route, originFormOf(req.url ?? route.path), req, res);
  };
}

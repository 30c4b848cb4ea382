/**
 * The Hono app for everything on the traffic port that is not forwarded:
 * the aggregated model list, convenience probes, and JSON 404/405 answers.
 * Inference POSTs never reach it (the traffic listener takes them first).
 */
import { Hono } from 'hono';
import { errorResponse } from '../errors/error-answer.ts';
import { SwitchyardError } from '../errors/errors.ts';
import { readiness, type ReadinessState } from './health.ts';
import { INFERENCE_ROUTES, LOCAL_TRAFFIC_ROUTES } from './routes.ts';

/** What the control routes read. */
export interface ControlAppDeps {
  /** Models served by at least one routable endpoint. */
  routableModels(): readonly string[];
  /** The base model a routable model is a LoRA adapter of, or undefined (see LoadView.adapterParent). */
  adapterParent(model: string): string | undefined;
  readiness(): ReadinessState;
  /** Epoch seconds reported as each model's `created`. */
  readonly startedAtS: number;
}

/**
 * The answer to a request the Node adapter could not turn into a Web Request
 * (a backslash in the path, a malformed Host): a 400 in the OpenAI shape
 * instead of the adapter's empty one. Anything else is a 500 that reveals
 * nothing.
 */
export function adapterErrorResponse(err: unknown): Response {
  const error =
    err instanceof Error && err.name === 'RequestError'
      ? new SwitchyardError('SWITCHYARD_BAD_REQUEST', 'The request target or Host header is not valid.')
      : new SwitchyardError('SWITCHYARD_INTERNAL', 'The router failed to handle the request.');
  return errorResponse(error);
}

/**
 * One entry of the model list. `parent` as vLLM gives it: the base model's id
 * for a LoRA adapter, null otherwise (also for a model no endpoint gave a
 * parent for), so clients written against vLLM find the field on every entry.
 * vLLM's `root` is left out: for an adapter it is a path on the engine's disk.
 */
function modelEntry(id: string, deps: ControlAppDeps): { id: string; object: 'model'; created: number; owned_by: 'switchyard'; parent: string | null } {
  return { id, object: 'model', created: deps.startedAtS, owned_by: 'switchyard', parent: deps.adapterParent(id) ?? null };
}

/** Builds the control app. */
export function createControlApp(deps: ControlAppDeps): Hono {
  const app = new Hono();
  app.get('/livez', (c) => c.json({ live: true }));
  app.get('/readyz', (c) => {
    const { status, body } = readiness(deps.readiness());
    return c.json(body, status);
  });
  // vLLM's own health route, which benchmark clients (GuideLLM) check before they start: 200 with
  // an empty body, as vLLM answers, while this replica is ready; 503 otherwise.
  app.get('/health', (c) => c.body(null, readiness(deps.readiness()).status));
  app.get('/v1/models', (c) =>
    c.json({
      object: 'list',
      data: deps.routableModels().map((id) => modelEntry(id, deps)),
    }),
  );
  app.all('*', (c) => {
    const path = c.req.path;
    const allowed = INFERENCE_ROUTES.has(path) ? 'POST' : LOCAL_TRAFFIC_ROUTES.get(path);
    if (allowed !== undefined) {
      return errorResponse(
        new SwitchyardError('SWITCHYARD_METHOD_NOT_ALLOWED', `Method ${c.req.method} is not allowed on ${path}; use ${allowed}.`, {
          headers: { allow: allowed },
        }),
      );
    }
    return errorResponse(new SwitchyardError('SWITCHYARD_NOT_FOUND', 'There is no such route on this server.'));
  });
  app.onError(() => errorResponse(new SwitchyardError('SWITCHYARD_INTERNAL', 'The router failed to handle the request.')));
  return app;
}

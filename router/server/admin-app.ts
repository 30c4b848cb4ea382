/**
 * The admin paths the main thread answers: metrics and debug views. Probes
 * (`/livez`, `/readyz`) are answered by the admin port's worker thread
 * itself (see admin-port.ts), so they never wait behind inference traffic.
 */
import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import { errorResponse } from '../errors/error-answer.ts';
import { SwitchyardError } from '../errors/errors.ts';

/** What the admin routes read. */
export interface AdminAppDeps {
  readonly registry: Registry;
  /** The `/debug/endpoints` document. */
  debugEndpoints(): unknown;
}

/** Builds the admin app. */
export function createAdminApp(deps: AdminAppDeps): Hono {
  const app = new Hono();
  app.get('/metrics', async (c) => c.body(await deps.registry.metrics(), 200, { 'content-type': deps.registry.contentType }));
  app.get('/debug/endpoints', (c) => c.json(deps.debugEndpoints()));
  app.all('*', () => errorResponse(new SwitchyardError('SWITCHYARD_NOT_FOUND', 'There is no such route on this server.')));
  return app;
}

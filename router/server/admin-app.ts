/**
 * The admin port: metrics, probes and debug views. It is a separate listener
 * so probes are never shed, capped or queued behind inference traffic.
 */
import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import { readiness, type ReadinessState } from './health.ts';
import { errorResponse } from './control-app.ts';
import { SwitchyardError } from '../errors/errors.ts';

/** What the admin routes read. */
export interface AdminAppDeps {
  readonly registry: Registry;
  readiness(): ReadinessState;
  /** The `/debug/endpoints` document. */
  debugEndpoints(): unknown;
}

/** Builds the admin app. */
export function createAdminApp(deps: AdminAppDeps): Hono {
  const app = new Hono();
  app.get('/livez', (c) => c.json({ live: true }));
  app.get('/readyz', (c) => {
    const { status, body } = readiness(deps.readiness());
    return c.json(body, status);
  });
  app.get('/metrics', async (c) => c.body(await deps.registry.metrics(), 200, { 'content-type': deps.registry.contentType }));
  app.get('/debug/endpoints', (c) => c.json(deps.debugEndpoints()));
  app.all('*', (c) => errorResponse(c, new SwitchyardError('SWITCHYARD_NOT_FOUND', 'There is no such route on this server.')));
  return app;
}

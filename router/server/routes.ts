/**
 * The routing table of the traffic port. Inference routes are POST-only and
 * forwarded; their label is the metric `route` value (bounded by this table).
 */

/** How the route's body is read for routing facts. */
export type BodyKind = 'json' | 'multipart';

/** One forwarded route. */
export interface InferenceRoute {
  readonly path: string;
  readonly body: BodyKind;
}

const routes: InferenceRoute[] = [
  { path: '/v1/chat/completions', body: 'json' },
  { path: '/v1/completions', body: 'json' },
  { path: '/v1/embeddings', body: 'json' },
  { path: '/v1/responses', body: 'json' },
  { path: '/v1/rerank', body: 'json' },
  { path: '/rerank', body: 'json' },
  { path: '/v1/score', body: 'json' },
  { path: '/score', body: 'json' },
  { path: '/tokenize', body: 'json' },
  { path: '/detokenize', body: 'json' },
  { path: '/v1/audio/transcriptions', body: 'multipart' },
];

/** Forwarded POST routes by exact path. */
export const INFERENCE_ROUTES: ReadonlyMap<string, InferenceRoute> = new Map(routes.map((route) => [route.path, route]));

/** Routes the router answers itself on the traffic port, with their one method. */
export const LOCAL_TRAFFIC_ROUTES: ReadonlyMap<string, 'GET'> = new Map([
  ['/v1/models', 'GET'],
  ['/livez', 'GET'],
  ['/readyz', 'GET'],
  ['/health', 'GET'],
]);


/** Path plus query of a request target (absolute-form reduced to origin-form), for forwarding. */
export function originFormOf(target: string): string {
  if (target.charCodeAt(0) === 0x2f) return target;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return '/';
  }
}

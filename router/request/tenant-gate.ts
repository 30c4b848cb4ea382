/**
 * The authentication and quota stages of a traffic-port request, when
 * `auth.apiKeysFile` is set: `Authorization: Bearer <key>` names a tenant
 * (401 otherwise), and the tenant's quota admits the request or refuses it
 * (429 with `Retry-After`). Both run before router-wide admission and before
 * the body is read, so a refused request costs no body read.
 *
 * The routes the router answers itself (`GET /v1/models`, unknown paths)
 * need the key too: the model list tells who is served. `/livez` and
 * `/readyz` never do, on either port: probes carry no credentials.
 *
 * Rate-limited tenants get OpenAI's `x-ratelimit-*-requests` headers on
 * every answer, success or refusal, so the OpenAI SDKs' own back-off works.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SwitchyardError } from '../errors/errors.ts';
import type { AuthFailureReason, QuotaLimit } from '../metrics/label-values.ts';
import type { Priority } from '../scheduling/priority.ts';
import type { QuotaOutcome, RateStatus, TenantLimits } from '../state/quota.ts';
import type { ApiKeySet } from './api-keys.ts';
import { pathOf } from './request-target.ts';
import type { Answerer } from './lifecycle.ts';

/** The realm named in `WWW-Authenticate` (RFC 6750 section 3). */
export const TRAFFIC_REALM = 'switchyard';

/** Traffic-port paths that never need a key (probes carry no credentials). */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/livez', '/readyz', '/health']);

/** What the gate reports. */
export interface TenantGateObserver {
  authFailed(reason: AuthFailureReason): void;
  quotaRejected(tenant: string, limit: QuotaLimit): void;
}

/** Collaborators of the {@link TenantGate}. */
export interface TenantGateDeps {
  /** The keys in force (reloaded behind this). */
  readonly keys: { readonly keys: ApiKeySet };
  readonly quotas: { acquire(tenant: string, limits: TenantLimits): Promise<QuotaOutcome> };
  readonly observer: TenantGateObserver;
}

/** An authenticated request admitted by its tenant's quota. */
export interface TenantAccess {
  readonly tenant: string;
  /** The tenant's priority class from the keys file; undefined: none given. */
  readonly priority: Priority | undefined;
  /** `x-ratelimit-*` headers as a flat name/value list; empty for a tenant without a rate limit. */
  readonly headers: readonly string[];
  /** Gives back the concurrency slot; call when the request settles (later calls do nothing). */
  release(): void;
}

const MISSING = new SwitchyardError('SWITCHYARD_UNAUTHORIZED', 'This server needs an API key: send Authorization: Bearer <key>.', {
  headers: { 'www-authenticate': `Bearer realm="${TRAFFIC_REALM}"`, 'cache-control': 'no-store' },
});
// RFC 6750 section 3.1: a presented but unusable token is answered with error="invalid_token".
const INVALID = new SwitchyardError('SWITCHYARD_UNAUTHORIZED', 'The API key is not valid.', {
  headers: { 'www-authenticate': `Bearer realm="${TRAFFIC_REALM}", error="invalid_token"`, 'cache-control': 'no-store' },
});
const NO_HEADERS: readonly string[] = [];
const NOTHING_TO_RELEASE = (): void => {};

export class TenantGate {
  readonly #deps: TenantGateDeps;

  constructor(deps: TenantGateDeps) {
    this.#deps = deps;
  }

  /**
   * The tenant `authorization` names.
   * @throws SwitchyardError 401 (`SWITCHYARD_UNAUTHORIZED`, with `WWW-Authenticate`) for a missing or invalid key.
   */
  authenticate(authorization: string | undefined): { readonly tenant: string; readonly limits: TenantLimits; readonly priority?: Priority } {
    const who = this.#deps.keys.keys.authenticate(authorization);
    if (who.kind === 'tenant') return who;
    this.#deps.observer.authFailed(who.kind);
    throw who.kind === 'missing' ? MISSING : INVALID;
  }

  /**
   * Authenticates and takes the tenant's quota. Waits for Redis at most the
   * quota check timeout, and only for a tenant with limits.
   * @throws SwitchyardError 401 as {@link authenticate}, or 429
   *   `SWITCHYARD_QUOTA_EXCEEDED` with `Retry-After` and the rate headers.
   */
  async admit(authorization: string | undefined): Promise<TenantAccess> {
    const { tenant, limits, priority } = this.authenticate(authorization);
    if (limits.requestsPerSecond === undefined && limits.maxConcurrent === undefined) return { tenant, priority, headers: NO_HEADERS, release: NOTHING_TO_RELEASE };
    const outcome = await this.#deps.quotas.acquire(tenant, limits);
    const headers = outcome.rate === undefined ? NO_HEADERS : rateLimitHeaders(outcome.rate);
    if (outcome.admitted) return { tenant, priority, headers, release: outcome.release };
    this.#deps.observer.quotaRejected(tenant, outcome.limit);
    const message =
      outcome.limit === 'rate'
        ? 'This API key is over its request rate quota; retry after the Retry-After delay.'
        : 'This API key has too many requests in progress; retry when one has finished.';
    throw new SwitchyardError('SWITCHYARD_QUOTA_EXCEEDED', message, { retryAfterSeconds: outcome.retryAfterMs / 1000, headers: pairsToRecord(headers) });
  }

  /**
   * Wraps the listener of the routes the router answers itself so they need
   * a key too, except `/livez` and `/readyz`.
   */
  guardLocalRoutes(fallback: (req: IncomingMessage, res: ServerResponse) => void, answer: Answerer): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      if (OPEN_PATHS.has(pathOf(req.url ?? '/'))) {
        fallback(req, res);
        return;
      }
      try {
        this.authenticate(req.headers.authorization);
      } catch (err) {
        answer.error(req, res, err as SwitchyardError, [], bodyPending(req));
        return;
      }
      fallback(req, res);
    };
  }
}

/**
 * OpenAI's request rate headers: the burst in force, what is left of it now,
 * and when it is whole again (`1s`, `120ms`, `1m30s`, as OpenAI writes them).
 */
export function rateLimitHeaders(rate: RateStatus): string[] {
  return [
    'x-ratelimit-limit-requests', String(rate.limit),
    'x-ratelimit-remaining-requests', String(Math.max(0, rate.remaining)),
    'x-ratelimit-reset-requests', formatDuration(rate.resetMs),
  ];
}

/** A duration as OpenAI's headers write it: `0ms`, `120ms`, `1s`, `1.5s`, `2m0s`. */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const seconds = `${Number(((whole % 60_000) / 1000).toFixed(3))}s`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}

/**
 * True when body bytes may still follow the request's headers: answering
 * before reading them must close the connection (lingering), or they would
 * be read as the next request. A request without a body keeps its
 * connection (`complete` is still false while its 'request' event runs).
 */
export function bodyPending(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function pairsToRecord(pairs: readonly string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) record[pairs[i] as string] = pairs[i + 1] as string;
  return record;
}


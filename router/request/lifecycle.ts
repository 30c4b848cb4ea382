/**
 * One inference request through its named stages:
 *
 *   authentication → tenant quota → router-wide admission → read → classify
 *   → prepare → schedule, then queue or shed when no candidate is left
 *   → admitted → forward → settle → over
 *
 * Authentication, the tenant's quota (both only with API keys configured)
 * and router-wide admission (the router's own caps and event-loop pressure)
 * come first because they need nothing from the body: a refused request
 * costs no body read. The quota comes before router-wide admission so a
 * tenant over its quota is told so, not that the router is busy; the
 * concurrency slot it takes is given back on every path, exactly once.
 * The body budget is part of reading (a body is reserved before its bytes
 * are kept). Every stage that refuses throws a SwitchyardError; the one
 * catch turns it into the answer, and settle runs exactly once either way.
 * HTTP matters (connections, routes, how an error is written and whether the
 * connection closes after it) stay with the listener, behind {@link Answerer}.
 * What is not the lifecycle's own job (a session's shared assignment, prefix
 * facts, response pins, the access log, the span's end) plugs in as request
 * hooks at prepare, admitted, the answer's first bytes and over
 * (request-hooks.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toSwitchyardError, type SwitchyardError } from '../errors/errors.ts';
import type { AdmissionControl, AdmissionResult, Admitted } from '../admission/admission-control.ts';
import type { EndpointState } from '../load/endpoint-state.ts';
import type { ForwardOutcome, ForwardRequest } from '../proxy/forward-contracts.ts';
import { acceptableRequestId, upstreamRequestHeaders } from '../proxy/headers.ts';
import type { RequestFacts } from '../scheduling/candidate.ts';
import { requestPriority, type Priority } from '../scheduling/priority.ts';
import type { AccessRecord } from './access-log.ts';
import type { RequestHooks } from './request-hooks.ts';
import type { RequestTrace, RequestTracer } from './request-trace.ts';
import type { BodyReader, ReadRequest } from './body-reader.ts';
import { ClientGoneError } from './read-body.ts';
import type { Classifier } from './classify.ts';
import { bodyPending, type TenantAccess, type TenantGate } from './tenant-gate.ts';
import { SALTED_ROUTES, tenantCacheSalt, withCacheSalt } from './tenant-cache-salt.ts';
import { withLastMember } from './body-member.ts';

/** Writes the router's own error answers: an HTTP matter the listener owns. */
export interface Answerer {
  /** Sends `error` with `headers` (flat name/value list); `close`: the connection closes after it (lingering while the client still sends). */
  error(req: IncomingMessage, res: ServerResponse, error: SwitchyardError, headers: string[], close: boolean): void;
}

/** What the lifecycle records. */
export interface LifecycleObserver {
  countRequest(route: string, model: string, status: number): void;
  /** How long the router took to answer a request it shed (seconds). */
  observeShed(seconds: number): void;
  /** A request shed by the read stage itself (the body budget). */
  countShed(reason: 'body_budget', priority: Priority): void;
}

/** The route a request came in on, as the lifecycle needs it. */
export interface LifecycleRoute {
  /** The route's path: the `route` metric label, and the path forwarded when the target is odd. */
  readonly path: string;
  readonly body: 'json' | 'multipart';
}

/** Collaborators of the {@link RequestLifecycle}, one per stage. */
export interface LifecycleDeps {
  /**
   * Priority: the header counts only from a trusted proxy (`server.trustedProxies`), as does
   * the InferenceObjective header (`objectiveHeader`, whose objective's class `objective` gives).
   */
  readonly priority: {
    readonly header: string;
    trusted(address: string | undefined): boolean;
    readonly objectiveHeader?: string | undefined;
    objective?(value: string | string[] | undefined): Priority | undefined;
  };
  /** Router-wide admission, scheduling, and queue or shed. */
  readonly admission: AdmissionControl<EndpointState>;
  readonly reader: BodyReader;
  readonly classifier: Classifier;
  /** The request hooks, built once at composition: they run in registration order at each point. */
  readonly hooks: RequestHooks;
  /** API keys and tenant quotas; undefined without `auth.apiKeysFile` (no authentication, no quotas). */
  readonly tenants?: Pick<TenantGate, 'admit'> | undefined;
  /** Set vLLM's `cache_salt` from the tenant on chat and completions bodies (`auth.tenantCacheSalt`; only with API keys). */
  readonly tenantCacheSalt?: boolean | undefined;
  readonly forward: (request: ForwardRequest) => void;
  /** Router-wide in-flight accounting. */
  readonly inFlight: { increment(): void; decrement(): void };
  readonly answer: Answerer;
  readonly observer: LifecycleObserver;
  readonly requestIdHeader: string;
  /** A span per request (tracing on); undefined: none, and the client's trace context passes through. Its end is a hook's (over). */
  readonly tracer?: RequestTracer | undefined;
  /** Warnings about one request; the fields always carry its `requestId`. */
  readonly warn?: ((fields: Record<string, unknown>, message: string) => void) | undefined;
}

/** The signal for requests that cannot queue: admission never waits for them. */
const NEVER_ABORTED = new AbortController().signal;

export class RequestLifecycle {
  readonly #deps: LifecycleDeps;

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
  }

  /** Runs one inference request to its end; never rejects. */
  async run(route: LifecycleRoute, target: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const deps = this.#deps;
    const arrivedAt = performance.now();
    const requestId = acceptableRequestId(req.headers[deps.requestIdHeader]) ?? randomUUID();
    const trusted = deps.priority.trusted(req.socket.remoteAddress);
    const trace = deps.tracer?.start({ method: req.method ?? 'POST', route: route.path, headers: req.headers, trustedParent: trusted, requestId, at: arrivedAt });
    // Stages: authentication, then the tenant's quota, before the body is read.
    let access: TenantAccess | undefined;
    if (deps.tenants !== undefined) {
      try {
        access = await deps.tenants.admit(req.headers.authorization);
      } catch (err) {
        const error = toSwitchyardError(err);
        deps.answer.error(req, res, error, [deps.requestIdHeader, requestId], bodyPending(req));
        deps.observer.countRequest(route.path, 'unknown', error.status);
        if (error.status === 429) deps.observer.observeShed((performance.now() - arrivedAt) / 1000);
        this.#over({ requestId, route: route.path, model: 'unknown', status: error.status, reason: error.code, durationMs: performance.now() - arrivedAt, bytes: 0 }, trace);
        return;
      }
      // Set on the response itself, so the engine's answer and the router's own errors both carry them.
      for (let i = 0; i + 1 < access.headers.length; i += 2) res.setHeader(access.headers[i] as string, access.headers[i + 1] as string);
    }
    // A trusted proxy's priority header, else its objective header's class, else the API key's class, else normal.
    const objective = trusted && deps.priority.objectiveHeader !== undefined ? deps.priority.objective?.(req.headers[deps.priority.objectiveHeader]) : undefined;
    const priority = requestPriority(req.headers[deps.priority.header], trusted, objective ?? access?.priority);
    // Stage: router-wide admission, before the body is read.
    const pressure = deps.admission.checkPressure(priority);
    if (pressure !== undefined) {
      access?.release();
      deps.answer.error(req, res, pressure, [deps.requestIdHeader, requestId, 'connection', 'close'], true);
      deps.observer.countRequest(route.path, 'unknown', pressure.status);
      deps.observer.observeShed((performance.now() - arrivedAt) / 1000);
      this.#over({ requestId, route: route.path, model: 'unknown', tenant: access?.tenant, status: pressure.status, reason: pressure.code, durationMs: performance.now() - arrivedAt, bytes: 0 }, trace);
      return;
    }
    if (trace?.recording === true) trace.stage('admitted', performance.now(), { 'switchyard.priority': priority });
    deps.inFlight.increment();
    const read: ReadRequest = deps.reader.open(route.body, req);
    let modelLabel = 'unknown';
    let queueMs: number | undefined;
    try {
      // Stage: read (bounded body scan, within the body budget).
      const body = await read.body();
      // Stages: classify (model, session name), then the hooks' prepare (pinned engine, prefix facts; a session's shared assignment).
      const facts = deps.classifier.classify(req.headers, body.facts, body.bytes.length, access?.tenant, route.body === 'json');
      const preparing = deps.hooks.prepare(facts, body.facts, access?.tenant);
      if (preparing !== undefined) await preparing;
      // Labelled once prepared: a request a hook refuses counts as `unknown`, as one classify refuses.
      modelLabel = facts.model;
      // Stages: schedule, then queue or shed when no candidate is left.
      const scheduling = performance.now();
      let attempts: readonly EndpointState[];
      try {
        // Not awaited when decided at once: nothing may be decided between this decision and its send.
        const scheduled = this.#schedule(facts, priority, res, access?.tenant);
        const decision = scheduled instanceof Promise ? await scheduled : scheduled;
        attempts = decision.attempts;
        if (trace?.recording === true) trace.stage('scheduled', performance.now(), { 'switchyard.endpoint': decision.attempts[0]?.id, 'switchyard.schedule.outcome': decision.outcome, 'switchyard.retry_candidates': decision.attempts.length - 1 });
      } finally {
        queueMs = performance.now() - scheduling;
      }
      deps.hooks.admitted(facts, attempts[0] as EndpointState);
      // The body's two rewrites (body-member.ts): a rewritten model, and the tenant's cache_salt, so tenants never share (or time) engine cache blocks.
      let bytes = facts.requestedModel === undefined ? body.bytes : withLastMember(body.bytes, 'model', JSON.stringify(facts.model));
      if (access !== undefined && deps.tenantCacheSalt === true && route.body === 'json' && SALTED_ROUTES.has(route.path)) {
        bytes = withCacheSalt(bytes, tenantCacheSalt(access.tenant, body.facts.cacheSalt));
      }
      // Stage: forward; settle runs when the exchange ends.
      this.#forward({
        route, target, req, res, requestId, trusted, arrivedAt, facts, attempts, bytes, tenant: access?.tenant, queueMs, trace,
        settle: () => {
          read.release();
          access?.release();
        },
      });
    } catch (err) {
      // Stage: settle, for a request that never went upstream.
      read.release();
      access?.release();
      deps.inFlight.decrement();
      const base = { requestId, route: route.path, model: modelLabel, tenant: access?.tenant, queueMs, bytes: 0 };
      if (err instanceof ClientGoneError) {
        res.destroy();
        deps.observer.countRequest(route.path, modelLabel, 0);
        this.#over({ ...base, status: 0, reason: 'client_gone', durationMs: performance.now() - arrivedAt }, trace);
        return;
      }
      const error = toSwitchyardError(err);
      // The rest of an unread body would follow the answer: close after it.
      deps.answer.error(req, res, error, [deps.requestIdHeader, requestId], !req.complete);
      deps.observer.countRequest(route.path, modelLabel, error.status);
      if (error.code === 'SWITCHYARD_BODY_BUDGET') deps.observer.countShed('body_budget', priority);
      if (error.status === 429) deps.observer.observeShed((performance.now() - arrivedAt) / 1000);
      this.#over({ ...base, status: error.status, reason: error.code, durationMs: performance.now() - arrivedAt }, trace);
    }
  }

  /** A request is over: the hooks' over (its access line, the end of its span). */
  #over(record: AccessRecord, trace: RequestTrace | undefined): void {
    this.#deps.hooks.over(record, trace);
  }

  /** Bookkeeping once the upstream exchange is over: the access line, and a warning when an engine's failure reached the client. */
  #finished(
    request: { readonly requestId: string; readonly route: LifecycleRoute; readonly facts: RequestFacts; readonly tenant: string | undefined; readonly arrivedAt: number; readonly queueMs: number; readonly trace: RequestTrace | undefined },
    outcome: ForwardOutcome,
  ): void {
    const { requestId, facts, tenant } = request;
    const endpoint = outcome.endpoint.id;
    if (outcome.failure !== undefined && outcome.failure !== 'client-abort') {
      this.#deps.warn?.({ requestId, endpoint, kind: outcome.failure, status: outcome.status, model: facts.model }, 'an engine failure reached the client');
    }
    // Checked before the record is built: this runs for every forwarded request, and the hooks that want it are off by default.
    if (!this.#deps.hooks.wantsRecord(request.trace)) return;
    this.#over({
      requestId,
      route: request.route.path,
      model: facts.model,
      requestedModel: facts.requestedModel,
      rewrite: facts.rewrite,
      tenant,
      endpoint,
      status: outcome.status,
      reason: outcome.failure === undefined ? undefined : outcome.failure === 'client-abort' ? 'client_gone' : `upstream_${outcome.failure}`,
      retry: outcome.retry,
      queueMs: request.queueMs,
      ttfbMs: outcome.firstByteAt === undefined ? undefined : outcome.firstByteAt - request.arrivedAt,
      durationMs: performance.now() - request.arrivedAt,
      bytes: outcome.bytes,
    }, request.trace);
  }

  /**
   * Schedule, queue or shed. Only a request that may wait needs to hear that
   * its client left meanwhile. A request decided at once is answered
   * synchronously (see AdmissionControl.admit): the caller sends it before
   * the next request is decided.
   */
  #schedule(facts: RequestFacts, priority: Priority, res: ServerResponse, tenant: string | undefined): Admitted<EndpointState> | Promise<Admitted<EndpointState>> {
    const admission = this.#deps.admission;
    if (!admission.mayQueue) return whenDecided(admission.admit(facts, priority, NEVER_ABORTED, tenant), admittedOrThrow);
    const clientGone = new AbortController();
    const onClose = () => clientGone.abort();
    res.once('close', onClose);
    return whenDecided(admission.admit(facts, priority, clientGone.signal, tenant), (decision) => {
      res.off('close', onClose);
      return admittedOrThrow(decision);
    });
  }

  #forward(request: {
    route: LifecycleRoute;
    target: string;
    req: IncomingMessage;
    res: ServerResponse;
    requestId: string;
    trusted: boolean;
    arrivedAt: number;
    facts: RequestFacts;
    attempts: readonly EndpointState[];
    bytes: Buffer;
    /** The API key's tenant; undefined without API keys. */
    tenant: string | undefined;
    /** Time spent scheduling (the router queue included). */
    queueMs: number;
    trace: RequestTrace | undefined;
    settle: () => void;
  }): void {
    const deps = this.#deps;
    const { route, req, facts } = request;
    deps.forward({
      res: request.res,
      path: request.target,
      headers: upstreamRequestHeaders(req.rawHeaders, { clientAddress: req.socket.remoteAddress, trustedClient: request.trusted, requestIdHeader: deps.requestIdHeader, requestId: request.requestId, traceContext: request.trace?.upstreamHeaders }),
      // Which Authorization an engine gets depends on its source: the forwarder decides per attempt
      // (with API keys on, forwarding the client's header is off: it was the client's key to this router).
      clientAuthorization: req.headers.authorization,
      body: request.bytes,
      stream: facts.stream,
      requestId: request.requestId,
      attempts: request.attempts,
      route: route.path,
      modelLabel: facts.model,
      arrivedAt: request.arrivedAt,
      onAnswerBytes: deps.hooks.answerReader(route.path, request.tenant),
      onDone: (outcome) => {
        request.settle();
        deps.inFlight.decrement();
        deps.observer.countRequest(route.path, facts.model, outcome.status);
        this.#finished(request, outcome);
      },
    });
  }
}

/** `then` of `decision`: at once when it is a value, when it settles when it is a promise. */
function whenDecided<A, B>(decision: A | Promise<A>, then: (decision: A) => B): B | Promise<B> {
  return decision instanceof Promise ? decision.then(then) : then(decision);
}

/** The admitted decision; a rejection thrown as its error, a client that left while queued as {@link ClientGoneError}. */
function admittedOrThrow(decision: AdmissionResult<EndpointState>): Admitted<EndpointState> {
  if (decision.kind === 'gone') throw new ClientGoneError('client left while queued');
  if (decision.kind === 'reject') throw decision.error;
  return decision;
}

/**
 * Forwards one admitted request to an engine with undici and streams the
 * response back byte for byte, with backpressure, per-phase timeouts, client
 * abort propagation and at most one retry on another endpoint.
 *
 * The hot path writes to the raw Node response: no Web streams, no copies.
 * Response headers are held back until the first body byte (or the end), so
 * a failure before any body byte can still become a clean 502/504, and a
 * retry is still possible while the engine has sent nothing at all.
 *
 * Each attempt chooses its own `Authorization` header from its endpoint's
 * discovery source: a retry may go to another source's endpoint, and one
 * source's engine key must never reach another source's pods.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { SwitchyardError } from '../errors/errors.ts';
import { sendError } from '../errors/error-answer.ts';
import { firstHeaderValue } from '../header-value.ts';
import type { EndpointState } from '../load/endpoint-state.ts';
import type { UpstreamFailureKind } from '../load/upstream-failure-kinds.ts';
import type { RetryReason } from '../metrics/label-values.ts';
import type { ForwardRequest, ForwarderDeps } from './forward-contracts.ts';
import { authorizationValue, downstreamResponseHeaders } from './headers.ts';
import { DeadlineQueue, type Deadline } from './deadline-queue.ts';
import { ClientAbortError, UpstreamDeadlineError, classifyUpstreamError, type FailureClass } from './upstream-failure.ts';

const LF = 0x0a;

const SSE_ERROR_EVENT = `data: ${JSON.stringify({
  error: {
    message: 'The engine failed while streaming the response.',
    type: 'upstream_error',
    param: null,
    code: 'SWITCHYARD_UPSTREAM_FAILED',
  },
})}\n\n`;

/** Forwards admitted requests. One instance serves the whole process. */
export class Forwarder {
  readonly #deps: ForwarderDeps;
  readonly #deadlines: AttemptDeadlines;

  constructor(deps: ForwarderDeps) {
    this.#deps = deps;
    this.#deadlines = { streamFirstByte: new DeadlineQueue(deps.timeouts.streamFirstByteMs), response: new DeadlineQueue(deps.timeouts.responseMs) };
  }

  /** Starts forwarding; completion is reported through `request.onDone`. */
  forward(request: ForwardRequest): void {
    new Exchange(this.#deps, this.#deadlines, request).start();
  }
}

/** Every attempt's deadline: a stream's first body byte, or a non-stream's whole response. */
interface AttemptDeadlines {
  readonly streamFirstByte: DeadlineQueue;
  readonly response: DeadlineQueue;
}

/** The life of one client request across its upstream attempts. */
class Exchange {
  readonly deps: ForwarderDeps;
  readonly deadlines: AttemptDeadlines;
  readonly request: ForwardRequest;
  attemptIndex = 0;
  current: Attempt | undefined;
  clientGone = false;
  done = false;
  /** Response headers have been written to the client. */
  committed = false;
  /** The request's `onAnswerBytes` still wants the answer's chunks. */
  readingAnswer = false;
  firstByteAt: number | undefined;
  /** Body bytes written to the client. */
  bytesSent = 0;
  retryReason: RetryReason | undefined;
  failure: FailureClass | undefined;
  /** The last two bytes sent to the client (-1: none yet), so a stream cut short can close its partial event. Numbers, not a string: slicing one per chunk cost ~0.6 µs a chunk. */
  lastByte = -1;
  byteBeforeLast = -1;
  /** Length of the request's header list before any Authorization pair was appended. */
  readonly headerCount: number;

  constructor(deps: ForwarderDeps, deadlines: AttemptDeadlines, request: ForwardRequest) {
    this.deps = deps;
    this.deadlines = deadlines;
    this.request = request;
    this.headerCount = request.headers.length;
  }

  start(): void {
    this.request.res.once('close', () => this.onClientClose());
    this.dispatch();
  }

  dispatch(): void {
    const target = this.request.attempts[this.attemptIndex] as EndpointState;
    const attempt = new Attempt(this, target, this.deps.load.begin(target));
    this.current = attempt;
    const { streamFirstByteMs, streamChunkGapMs, responseMs } = this.deps.timeouts;
    const stream = this.request.stream;
    this.deps.dispatcher.dispatch(
      {
        origin: target.origin,
        path: target.basePath + this.request.path,
        method: 'POST',
        headers: this.headersFor(target),
        body: this.request.body,
        headersTimeout: stream ? streamFirstByteMs : responseMs,
        bodyTimeout: stream ? streamChunkGapMs : responseMs,
      },
      attempt,
    );
  }

  /**
   * The header list for an attempt to `target`, with the Authorization its source's rule gives.
   * The first attempt appends to the request's own list; a retry gets a fresh copy, so a list
   * the HTTP client may still hold for the first attempt is never changed under it.
   */
  headersFor(target: EndpointState): string[] {
    const value = authorizationValue(this.deps.authorizationFor(target), this.request.clientAuthorization);
    const headers = this.attemptIndex === 0 ? this.request.headers : this.request.headers.slice(0, this.headerCount);
    if (value !== undefined) headers.push('authorization', value);
    return headers;
  }

  onClientClose(): void {
    if (this.done || this.request.res.writableFinished) return;
    this.clientGone = true;
    this.current?.abort(new ClientAbortError('client closed the connection'));
  }

  /** The engine answered with headers; held back until the first body byte. */
  writeHead(status: number, headers: IncomingHttpHeaders, target: EndpointState): void {
    const { res, requestId } = this.request;
    this.committed = true;
    const { endpointHeader, endpointName } = this.deps;
    const endpoint = endpointHeader === undefined || endpointName === undefined ? undefined : ([endpointHeader, endpointName(target)] as const);
    res.writeHead(status, downstreamResponseHeaders(headers, this.deps.requestIdHeader, requestId, endpoint));
  }

  /** An attempt failed before any response byte reached the client. */
  failedBeforeCommit(attempt: Attempt, kind: FailureClass): void {
    const retriable = (kind === 'connect' || kind === 'reset') && !attempt.responseStarted;
    if (
      retriable &&
      this.deps.retry &&
      !this.clientGone &&
      this.attemptIndex + 1 < this.request.attempts.length &&
      this.deps.retryBudget.tryAcquire()
    ) {
      this.deps.metrics.countRetry(kind);
      this.retryReason = kind;
      this.failure = undefined; // the retry decides how the exchange ends
      this.attemptIndex++;
      this.dispatch();
      return;
    }
    if (this.clientGone) {
      this.finish(0);
      return;
    }
    const error =
      kind === 'timeout'
        ? new SwitchyardError('SWITCHYARD_UPSTREAM_TIMEOUT', 'The engine did not answer in time.')
        : new SwitchyardError('SWITCHYARD_UPSTREAM_UNREACHABLE', 'The engine could not be reached or closed the connection.');
    sendError(this.request.res, error, [this.deps.requestIdHeader, this.request.requestId]);
    this.finish(error.status);
  }

  /** An attempt failed after response bytes reached the client; `lengthDeclared`: the engine's answer, passed through, carried a Content-Length. */
  failedAfterCommit(contentType: string | undefined, lengthDeclared: boolean): void {
    const res = this.request.res;
    // An engine's Content-Length went to the client with its headers: an error event past it
    // would overflow the declared body, and a keep-alive client would read it as its next response.
    if (!this.clientGone && !lengthDeclared && contentType?.startsWith('text/event-stream')) {
      // End the SSE stream with an error event (after closing any partial event) and no [DONE].
      const closer = this.lastByte !== LF ? '\n\n' : this.byteBeforeLast === LF ? '' : '\n';
      res.end(closer + SSE_ERROR_EVENT);
    } else {
      // A non-SSE body cut short: break the connection so the client cannot mistake it for complete.
      res.destroy();
    }
    this.finish(res.statusCode);
  }

  finish(status: number): void {
    if (this.done) return;
    this.done = true;
    const now = performance.now();
    const { route, modelLabel, arrivedAt } = this.request;
    const ttfb = this.firstByteAt === undefined ? undefined : (this.firstByteAt - arrivedAt) / 1000;
    this.deps.metrics.observeTimings(route, modelLabel, (now - arrivedAt) / 1000, ttfb);
    if (this.request.stream && ttfb !== undefined && status >= 200 && status < 300) this.deps.metrics.observeFirstToken(route, modelLabel, ttfb);
    const endpoint: EndpointState = this.current?.target ?? (this.request.attempts[0] as EndpointState);
    this.request.onDone({ status, endpoint, retry: this.retryReason, failure: this.failure, firstByteAt: this.firstByteAt, bytes: this.bytesSent });
  }
}

/** One upstream request: an undici dispatch handler (controller API). */
class Attempt implements Dispatcher.DispatchHandler {
  readonly exchange: Exchange;
  readonly target: EndpointState;
  /** The load view's token for this attempt's in-flight count. */
  readonly loadToken: number;
  /** A retry holds a slot of the retry budget until it settles. */
  readonly isRetry: boolean;
  /** `performance.now()` when the attempt was sent. */
  readonly sentAt = performance.now();
  controller: Dispatcher.DispatchController | undefined;
  responseStarted = false;
  status = 0;
  headers: IncomingHttpHeaders | undefined;
  settled = false;
  deadline: Deadline | undefined;
  pendingAbort: Error | undefined;

  constructor(exchange: Exchange, target: EndpointState, loadToken: number) {
    this.exchange = exchange;
    this.target = target;
    this.loadToken = loadToken;
    this.isRetry = exchange.attemptIndex > 0;
    // Streams: the first body byte must come within the first-token budget (undici's
    // headersTimeout alone would pass once headers arrive). Non-streams: a whole-response cap.
    const { streamFirstByte, response } = exchange.deadlines;
    this.deadline = (exchange.request.stream ? streamFirstByte : response).add(() => this.abort(new UpstreamDeadlineError('deadline passed')));
  }

  abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.pendingAbort = reason;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort) controller.abort(this.pendingAbort);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.responseStarted = true;
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const exchange = this.exchange;
    const res = exchange.request.res;
    if (!exchange.committed) {
      exchange.firstByteAt = performance.now();
      if (exchange.request.stream) {
        this.clearDeadline();
        // An error answer comes fast whatever the engine's load: only a started stream says it keeps up.
        if (this.status < 300) exchange.deps.load.firstByte(this.target, this.loadToken, exchange.firstByteAt - this.sentAt);
      }
      exchange.writeHead(this.status, this.headers ?? {}, this.target);
      exchange.readingAnswer = this.status < 300 && exchange.request.onAnswerBytes !== undefined;
    }
    if (exchange.readingAnswer) exchange.readingAnswer = exchange.request.onAnswerBytes?.(this.target, chunk) === true;
    const length = chunk.length;
    exchange.bytesSent += length;
    if (length > 0) {
      exchange.byteBeforeLast = length >= 2 ? (chunk[length - 2] as number) : exchange.lastByte;
      exchange.lastByte = chunk[length - 1] as number;
    }
    if (!res.write(chunk)) {
      controller.pause();
      res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    this.clearDeadline();
    const exchange = this.exchange;
    if (!exchange.committed) exchange.writeHead(this.status, this.headers ?? {}, this.target);
    exchange.request.res.end();
    this.settle(this.status >= 500 ? 'status_5xx' : undefined, this.status < 300 ? performance.now() - this.sentAt : undefined);
    // Counted apart from the router's own 5xx answers, so alerts can tell the two apart.
    if (this.status >= 500) exchange.deps.metrics.countUpstreamError(this.target, 'status_5xx');
    exchange.finish(this.status);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.clearDeadline();
    const exchange = this.exchange;
    const kind = classifyUpstreamError(err);
    const failure: UpstreamFailureKind | undefined =
      kind === 'client-abort' ? undefined : kind === 'other' ? 'reset' : exchange.committed ? 'midstream' : kind;
    this.settle(failure);
    // As counted: a cut after the answer started is `midstream`, whatever broke it.
    exchange.failure = failure ?? 'client-abort';
    if (failure !== undefined) {
      exchange.deps.metrics.countUpstreamError(this.target, failure);
      exchange.deps.onUpstreamFailure(this.target.id, kind, err, exchange.request.requestId);
    }
    if (exchange.committed) exchange.failedAfterCommit(firstHeaderValue(this.headers?.['content-type']), this.headers?.['content-length'] !== undefined);
    else exchange.failedBeforeCommit(this, kind);
  }

  clearDeadline(): void {
    if (this.deadline !== undefined) {
      this.deadline.cancel();
      this.deadline = undefined;
    }
  }

  /** `serviceMs`: send to last byte of a complete successful answer. */
  settle(failure: UpstreamFailureKind | undefined, serviceMs?: number): void {
    if (this.settled) return;
    this.settled = true;
    if (this.isRetry) this.exchange.deps.retryBudget.release();
    this.exchange.deps.load.settle(this.target, this.loadToken, failure, serviceMs);
  }
}

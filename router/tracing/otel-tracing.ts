/**
 * OpenTelemetry tracing of inference requests: one SERVER span per request,
 * its stages as events, exported over OTLP through a bounded queue. Loaded
 * with a dynamic import only when `tracing.enabled` is on, so a router
 * without tracing loads no OpenTelemetry module.
 *
 * Who may decide sampling: a W3C `traceparent` from any client continues
 * its trace (the engine's span and the client's join the router's), but
 * only a trusted proxy's sampled flag and `tracestate` count. From any
 * other client the ratio decides with a random draw, not the trace id's
 * bits: a client picks its own trace id, so a trace-id ratio would let it
 * pick ids that are always sampled.
 *
 * Nothing is registered globally (no global tracer provider, propagator or
 * context manager): the spans are started with explicit contexts.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, createContextKey, trace, type Attributes, type Context, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, TraceState, parseTraceParent, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SamplingResult,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { Config } from '../config/schema.ts';
import type { AccessRecord } from '../request/access-log.ts';
import type { RequestTrace, RequestTracer, TraceAttributes, TraceStage, TraceStart } from '../request/request-trace.ts';

/** What the router needs of tracing: the request tracer, and a flush at shutdown. */
export interface Tracing {
  readonly tracer: RequestTracer;
  /** Exports what is queued and stops; resolves within `timeoutMs` whatever the collector does. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** Where export trouble is reported (once when it starts, once when it ends). */
export interface TracingLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** Inputs of {@link createTracing} besides the configuration. */
export interface TracingDeps {
  /** Exporter headers from `tracing.headersFile` (never logged). */
  readonly headers: Readonly<Record<string, string>>;
  readonly version: string;
  readonly log: TracingLog;
  /** Random draws in [0, 1) for untrusted parents; injectable for tests. */
  readonly random?: () => number;
  /** An exporter instead of OTLP (tests). */
  readonly exporter?: SpanExporter;
}

type TracingConfig = Config['tracing'];

/** Marks a context whose remote parent came from a client that is not a trusted proxy. */
const UNTRUSTED_PARENT = createContextKey('switchyard untrusted parent');

/** Builds the tracer provider, sampler and OTLP exporter for `config`. */
export async function createTracing(config: TracingConfig, deps: TracingDeps): Promise<Tracing> {
  const exporter = new ReportingExporter(deps.exporter ?? (await otlpExporter(config, deps.headers)), deps.log);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': deps.version }),
    sampler: new RouterSampler(config, deps.random ?? Math.random),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: config.maxQueueSize,
        maxExportBatchSize: config.maxExportBatchSize,
        scheduledDelayMillis: config.scheduleDelayMs,
        exportTimeoutMillis: config.exportTimeoutMs,
      }),
    ],
  });
  const tracer = new OtelRequestTracer(provider.getTracer('switchyard', deps.version));
  return {
    tracer,
    shutdown: async (timeoutMs) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([provider.forceFlush({ timeoutMillis: timeoutMs }).then(() => provider.shutdown()).catch(() => undefined), deadline]);
      clearTimeout(timer);
    },
  };
}

/** The OTLP exporter for the configured protocol; only that protocol's module is loaded. */
async function otlpExporter(config: TracingConfig, headers: Readonly<Record<string, string>>): Promise<SpanExporter> {
  const url = exportUrl(config);
  const timeoutMillis = config.exportTimeoutMs;
  switch (config.protocol) {
    case 'http/protobuf': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
      return new OTLPTraceExporter({ url, headers: { ...headers }, timeoutMillis });
    }
    case 'http/json': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      return new OTLPTraceExporter({ url, headers: { ...headers }, timeoutMillis });
    }
    case 'grpc': {
      const [{ OTLPTraceExporter }, { Metadata }] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-grpc'), import('@grpc/grpc-js')]);
      const metadata = new Metadata();
      for (const [name, value] of Object.entries(headers)) metadata.set(name, value);
      return new OTLPTraceExporter({ url, metadata, timeoutMillis });
    }
  }
}

/** The traces URL: `tracesEndpoint` as is, else `endpoint` (+ `/v1/traces` over HTTP), else the OTLP default. */
export function exportUrl(config: Pick<TracingConfig, 'endpoint' | 'tracesEndpoint' | 'protocol'>): string {
  if (config.tracesEndpoint !== undefined) return config.tracesEndpoint;
  const grpc = config.protocol === 'grpc';
  const base = config.endpoint ?? (grpc ? 'http://localhost:4317' : 'http://localhost:4318');
  return grpc ? base : `${base.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * The head sampler. Without a parent (or with one from an untrusted client)
 * the configured ratio decides; a trusted proxy's parent decides for the
 * parent-based samplers.
 */
export class RouterSampler implements Sampler {
  readonly #ratio: number;
  readonly #parentBased: boolean;
  readonly #byTraceId: TraceIdRatioBasedSampler;
  readonly #random: () => number;

  constructor(config: Pick<TracingConfig, 'sampler' | 'samplerArg'>, random: () => number) {
    this.#ratio = config.sampler.endsWith('always_on') ? 1 : config.sampler.endsWith('always_off') ? 0 : config.samplerArg;
    this.#parentBased = config.sampler.startsWith('parentbased_');
    this.#byTraceId = new TraceIdRatioBasedSampler(this.#ratio);
    this.#random = random;
  }

  shouldSample(context: Context, traceId: string): SamplingResult {
    const parent = trace.getSpanContext(context);
    if (parent === undefined) return this.#byTraceId.shouldSample(context, traceId);
    if (context.getValue(UNTRUSTED_PARENT) === true) return { decision: this.#random() < this.#ratio ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
    if (!this.#parentBased) return this.#byTraceId.shouldSample(context, traceId);
    return { decision: (parent.traceFlags & TraceFlags.SAMPLED) !== 0 ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
  }

  toString(): string {
    return `RouterSampler{ratio=${this.#ratio}, parentBased=${this.#parentBased}}`;
  }
}

/**
 * The client's trace context as the parent of the router span: undefined
 * without a valid `traceparent` (several of them, joined by Node, are not
 * valid). `tracestate` (at most 32 members and 512 characters kept, the
 * W3C limits) and the sampled flag count only from a trusted proxy.
 */
export function parentContext(headers: TraceStart['headers'], trusted: boolean): Context {
  const header = headers.traceparent;
  if (typeof header !== 'string') return ROOT_CONTEXT;
  const parsed = parseTraceParent(header);
  if (parsed === null) return ROOT_CONTEXT;
  const state = headers.tracestate;
  const parent: SpanContext = {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    traceFlags: trusted ? parsed.traceFlags : TraceFlags.NONE,
    isRemote: true,
    ...(trusted && typeof state === 'string' && state !== '' ? { traceState: new TraceState(state) } : {}),
  };
  const context = trace.setSpanContext(ROOT_CONTEXT, parent);
  return trusted ? context : context.setValue(UNTRUSTED_PARENT, true);
}

/** The `gen_ai.operation.name` of an OpenAI route. */
const OPERATIONS: Readonly<Record<string, string>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'text_completion',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'chat',
};

class OtelRequestTracer implements RequestTracer {
  readonly #tracer: Tracer;

  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  start(request: TraceStart): RequestTrace {
    const span = this.#tracer.startSpan(`${request.method} ${request.route}`, { kind: SpanKind.SERVER, startTime: request.at }, parentContext(request.headers, request.trustedParent));
    // Attributes only for a sampled span: most requests' spans are not, and they are on the hot path.
    if (span.isRecording()) {
      span.setAttributes({ 'http.request.method': request.method, 'http.route': request.route, 'url.path': request.route, 'switchyard.request_id': request.requestId });
      const operation = OPERATIONS[request.route];
      if (operation !== undefined) span.setAttribute('gen_ai.operation.name', operation);
    }
    return new OtelRequestTrace(span, request.at);
  }
}

class OtelRequestTrace implements RequestTrace {
  readonly upstreamHeaders: readonly string[];
  readonly recording: boolean;
  readonly #span: Span;
  readonly #startedAt: number;

  constructor(span: Span, startedAt: number) {
    this.#span = span;
    this.#startedAt = startedAt;
    this.recording = span.isRecording();
    const context = span.spanContext();
    const traceparent = `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    const tracestate = context.traceState?.serialize();
    this.upstreamHeaders = tracestate === undefined || tracestate === '' ? ['traceparent', traceparent] : ['traceparent', traceparent, 'tracestate', tracestate];
  }

  stage(stage: TraceStage, at: number, attributes?: TraceAttributes): void {
    if (!this.recording) return;
    this.#span.addEvent(`switchyard.${stage}`, definedOnly(attributes), at);
  }

  end(record: AccessRecord, at: number): void {
    const span = this.#span;
    if (!this.recording) return;
    if (record.ttfbMs !== undefined) span.addEvent('switchyard.first_byte', {}, this.#startedAt + record.ttfbMs);
    span.setAttributes(
      definedOnly({
        'http.response.status_code': record.status === 0 ? undefined : record.status,
        'http.response.body.size': record.bytes,
        'gen_ai.request.model': record.model === 'unknown' ? undefined : record.model,
        'switchyard.tenant': record.tenant,
        'switchyard.endpoint': record.endpoint,
        'switchyard.retry': record.retry,
        'switchyard.queue_ms': record.queueMs,
        'error.type': record.reason ?? (record.status >= 500 ? String(record.status) : undefined),
      }),
    );
    // HTTP server spans: 5xx is the server's error; a 4xx is the client's (OpenTelemetry HTTP conventions).
    if (record.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(at);
  }
}

function definedOnly(attributes: TraceAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (attributes === undefined) return out;
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * The exporter with its failures reported once when exports start failing
 * and once when they recover, never per batch, and never with the
 * collector's answer (it might echo a header).
 */
class ReportingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #log: TracingLog;
  #failingSince: number | undefined;

  constructor(inner: SpanExporter, log: TracingLog) {
    this.#inner = inner;
    this.#log = log;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.#failingSince !== undefined) this.#log.info({ failedForMs: Date.now() - this.#failingSince }, 'trace export recovered');
        this.#failingSince = undefined;
      } else if (this.#failingSince === undefined) {
        this.#failingSince = Date.now();
        this.#log.warn({ spans: spans.length, error: result.error?.name ?? 'error' }, 'trace export failing; spans are dropped until the collector answers');
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

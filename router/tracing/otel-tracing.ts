/**
 * OpenTelemetry tracing of inference requests: one SERVER span per request,
 * its stages as events, exported over OTLP through a bounded queue. Loaded
 * with a dynamic import only when `tracing.enabled` is on, so a router
 * without tracing loads no OpenTelemetry SDK or exporter.
 *
 * Sampling is decided before a span exists (head-sampling.ts): an
 * unsampled request costs no span object, only the `traceparent` the
 * engine gets with the sampled flag off.
 *
 * Nothing is registered globally (no global tracer provider, propagator or
 * context manager): the spans are started with explicit contexts.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { Config } from '../config/schema.ts';
import type { AccessRecord } from '../request/access-log.ts';
import type { RequestTrace, RequestTracer, TraceAttributes, TraceStage, TraceStart } from '../request/request-trace.ts';
import { HeadSampler, TraceIds, incomingParent, type IncomingParent } from './head-sampling.ts';

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
  /** Random draws in [0, 1) for the sampling decisions; injectable for tests. */
  readonly random?: () => number;
  /** An exporter instead of OTLP (tests). */
  readonly exporter?: SpanExporter;
}

type TracingConfig = Config['tracing'];

/** Builds the tracer provider, sampler and OTLP exporter for `config`. */
export async function createTracing(config: TracingConfig, deps: TracingDeps): Promise<Tracing> {
  const exporter = new ReportingExporter(deps.exporter ?? (await otlpExporter(config, deps.headers)), deps.log);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': deps.version }),
    // Sampling is decided before a span is started (HeadSampler): what reaches the SDK is sampled.
    sampler: new AlwaysOnSampler(),
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
  const tracer = new OtelRequestTracer(provider.getTracer('switchyard', deps.version), new HeadSampler(config, deps.random ?? Math.random));
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

/** The `gen_ai.operation.name` of an OpenAI route. */
const OPERATIONS: Readonly<Record<string, string>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'text_completion',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'chat',
};

class OtelRequestTracer implements RequestTracer {
  readonly #tracer: Tracer;
  readonly #sampler: HeadSampler;
  readonly #ids = new TraceIds();

  constructor(tracer: Tracer, sampler: HeadSampler) {
    this.#tracer = tracer;
    this.#sampler = sampler;
  }

  start(request: TraceStart): RequestTrace {
    const parent = incomingParent(request.headers, request.trustedParent);
    if (!this.#sampler.sampled(parent)) return unsampled(parent, this.#ids);
    const context =
      parent === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true, ...(parent.traceState === undefined ? {} : { traceState: parent.traceState }) });
    const attributes: Attributes = { 'http.request.method': request.method, 'http.route': request.route, 'url.path': request.route, 'switchyard.request_id': request.requestId };
    const operation = OPERATIONS[request.route];
    if (operation !== undefined) attributes['gen_ai.operation.name'] = operation;
    const span = this.#tracer.startSpan(`${request.method} ${request.route}`, { kind: SpanKind.SERVER, startTime: request.at, attributes }, context);
    return new SampledTrace(span, request.at);
  }
}

/** `traceparent` (and a trusted proxy's `tracestate`) as a flat header list. */
function traceContextHeaders(traceId: string, spanId: string, sampled: boolean, traceState: string | undefined): readonly string[] {
  const traceparent = `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
  return traceState === undefined || traceState === '' ? ['traceparent', traceparent] : ['traceparent', traceparent, 'tracestate', traceState];
}

const NOTHING = () => undefined;

/** A request that is not sampled: no span, only the trace context the engine gets, its sampled flag off. */
function unsampled(parent: IncomingParent | undefined, ids: TraceIds): RequestTrace {
  return {
    upstreamHeaders: traceContextHeaders(parent?.traceId ?? ids.traceId(), ids.spanId(), false, parent?.traceState?.serialize()),
    recording: false,
    stage: NOTHING,
    end: NOTHING,
  };
}

class SampledTrace implements RequestTrace {
  readonly upstreamHeaders: readonly string[];
  readonly recording = true;
  readonly #span: Span;
  readonly #startedAt: number;

  constructor(span: Span, startedAt: number) {
    this.#span = span;
    this.#startedAt = startedAt;
    const context = span.spanContext();
    this.upstreamHeaders = traceContextHeaders(context.traceId, context.spanId, true, context.traceState?.serialize());
  }

  stage(stage: TraceStage, at: number, attributes?: TraceAttributes): void {
    this.#span.addEvent(`switchyard.${stage}`, definedOnly(attributes), at);
  }

  end(record: AccessRecord, at: number): void {
    const span = this.#span;
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

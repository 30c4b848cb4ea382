/**
 * The engine simulator's optional OpenTelemetry spans, as vLLM exports them
 * with `--otlp-traces-endpoint`: one `llm_request` SERVER span per inference
 * request, the child of the `traceparent` the request carried (parent-based:
 * an unsampled parent gives no span), exported over OTLP HTTP/protobuf. It
 * lets a test see a trace run from a client through the router to the engine.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { IncomingHttpHeaders } from 'node:http';

/** Reads trace-context headers from Node's parsed request headers. */
const HEADER_GETTER = {
  get: (carrier: IncomingHttpHeaders, key: string) => carrier[key],
  keys: (carrier: IncomingHttpHeaders) => Object.keys(carrier),
};

/** One request's span in the simulator. */
export interface SimSpan {
  end(status: number): void;
}

/** Starts and exports the simulator's spans. */
export class SimTracing {
  readonly #provider: TracerProvider;
  readonly #propagator = new W3CTraceContextPropagator();
  readonly #model: string;

  /** `endpoint`: the OTLP traces URL (e.g. http://127.0.0.1:4318/v1/traces). */
  constructor(endpoint: string, model: string, serviceName = 'engine-simulator') {
    this.#model = model;
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: endpoint }), scheduledDelayMillis: 200 })],
    });
  }

  /** The span of one inference request, started at `startedAt` (`performance.now()` ms). */
  start(headers: IncomingHttpHeaders, startedAt: number, requestId: string | undefined): SimSpan {
    const parent = this.#propagator.extract(ROOT_CONTEXT, headers, HEADER_GETTER);
    const span: Span = this.#provider.getTracer('engine-simulator').startSpan(
      'llm_request',
      { kind: SpanKind.SERVER, startTime: startedAt, attributes: { 'gen_ai.request.model': this.#model, ...(requestId === undefined ? {} : { 'gen_ai.request.id': requestId }) } },
      parent,
    );
    return {
      end: (status) => {
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      },
    };
  }

  /** Exports what is queued, then stops. */
  async close(): Promise<void> {
    await this.#provider.forceFlush();
    await this.#provider.shutdown();
  }
}


/** The `tracing` section: OpenTelemetry export and sampling. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

/** `tracing.sampler`: the standard OpenTelemetry sampler names (OTEL_TRACES_SAMPLER). */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** `tracing.protocol`: the OTLP transports (OTEL_EXPORTER_OTLP_PROTOCOL). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export const tracing = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe('Export an OpenTelemetry span per inference request over OTLP and propagate W3C trace context to the engines under it. Off: no OpenTelemetry module is loaded and a client\'s traceparent passes through untouched.'),
    endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('OTLP base URL of the collector; /v1/traces is appended for the HTTP protocols. Unset: http://localhost:4318 (HTTP) or http://localhost:4317 (gRPC).'),
    tracesEndpoint: z.url({ protocol: /^https?$/ }).optional().describe('OTLP traces URL used as is (no path appended); wins over tracing.endpoint.'),
    protocol: z.enum(OTLP_PROTOCOLS).default('http/protobuf').describe('OTLP transport.'),
    headersFile: z
      .string()
      .min(1)
      .optional()
      .describe('File of exporter headers (one `name=value` a line, or the comma-separated OTEL_EXPORTER_OTLP_HEADERS form), e.g. a collector\'s API key; read at start-up, never logged or shown.'),
    serviceName: z.string().min(1).max(256).default('switchyard').describe('service.name of the spans.'),
    sampler: z
      .enum(TRACE_SAMPLERS)
      .default('parentbased_traceidratio')
      .describe("Head sampler. parentbased_*: a request's incoming sampled flag decides, but only from server.trustedProxies; from any other client the ratio decides (a client cannot force tracing on or off)."),
    samplerArg: z.number().min(0).max(1).default(1).describe('Ratio of traces sampled by the traceidratio samplers (0-1); 0.01 suits a busy fleet.'),
    maxQueueSize: z.number().int().min(1).max(1_000_000).default(2_048).describe('Finished spans waiting for export at most; past it spans are dropped, never waited for (spans).'),
    maxExportBatchSize: z.number().int().min(1).max(100_000).default(512).describe('Spans per OTLP export at most (spans; at most maxQueueSize).'),
    scheduleDelayMs: positiveMs.default(5_000).describe('Time between exports of the waiting spans (ms).'),
    exportTimeoutMs: positiveMs.default(10_000).describe('Time one OTLP export may take (ms).'),
  })
  .refine((value) => value.maxExportBatchSize <= value.maxQueueSize, { path: ['maxExportBatchSize'], message: 'must be at most tracing.maxQueueSize' })
  .prefault({})
  .describe('OpenTelemetry tracing (standard OTEL_* variables are read too: see the reference).');

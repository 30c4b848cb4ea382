import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { SamplingDecision, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { configSchema } from '../config/schema.ts';
import { RouterSampler, createTracing, exportUrl, parentContext } from './otel-tracing.ts';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SAMPLED = `00-${TRACE}-b7ad6b7169203331-01`;
const UNSAMPLED = `00-${TRACE}-b7ad6b7169203331-00`;

const tracingConfig = (overrides: Record<string, unknown> = {}) => configSchema.parse({ tracing: { enabled: true, ...overrides } }).tracing;
const decide = (sampler: RouterSampler, headers: Record<string, string>, trusted: boolean, traceId = TRACE) =>
  sampler.shouldSample(parentContext(headers, trusted), traceId).decision;

describe('RouterSampler', () => {
  it("follows a trusted proxy's sampled flag either way (parent-based)", () => {
    const sampler = new RouterSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0.5 }, () => 0.99);
    assert.equal(decide(sampler, { traceparent: SAMPLED }, true), SamplingDecision.RECORD_AND_SAMPLED);
    assert.equal(decide(sampler, { traceparent: UNSAMPLED }, true), SamplingDecision.NOT_RECORD);
  });

  it("lets the ratio decide for an untrusted client, by a random draw, whatever its flag or trace id", () => {
    const never = new RouterSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0.01 }, () => 0.5);
    assert.equal(decide(never, { traceparent: SAMPLED }, false), SamplingDecision.NOT_RECORD, 'the sampled flag does not force tracing');
    // Its 32-bit words XOR to 1: OpenTelemetry's trace-id ratio samples it at any ratio above 1 in 4 billion.
    const crafted = `${'0'.repeat(31)}1`;
    assert.equal(decide(never, { traceparent: `00-${crafted}-b7ad6b7169203331-01` }, false, crafted), SamplingDecision.NOT_RECORD, 'a trace id chosen to pass the ratio does not either');
    const always = new RouterSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0.01 }, () => 0.001);
    assert.equal(decide(always, { traceparent: UNSAMPLED }, false), SamplingDecision.RECORD_AND_SAMPLED, 'nor does an unsampled flag stop it');
  });

  it('samples by ratio without a parent, and always_on / always_off ignore the argument', () => {
    assert.equal(decide(new RouterSampler({ sampler: 'parentbased_traceidratio', samplerArg: 1 }, () => 0.99), {}, false), SamplingDecision.RECORD_AND_SAMPLED);
    assert.equal(decide(new RouterSampler({ sampler: 'parentbased_traceidratio', samplerArg: 0 }, () => 0), {}, false), SamplingDecision.NOT_RECORD);
    assert.equal(decide(new RouterSampler({ sampler: 'always_on', samplerArg: 0 }, () => 0.99), { traceparent: UNSAMPLED }, true), SamplingDecision.RECORD_AND_SAMPLED, 'not parent-based: the flag is ignored');
    assert.equal(decide(new RouterSampler({ sampler: 'parentbased_always_off', samplerArg: 1 }, () => 0), {}, false), SamplingDecision.NOT_RECORD);
  });
});

describe('parentContext', () => {
  it('reads a valid traceparent; tracestate only from a trusted proxy', () => {
    const trusted = trace.getSpanContext(parentContext({ traceparent: SAMPLED, tracestate: 'a=1,b=2' }, true));
    assert.equal(trusted?.traceId, TRACE);
    assert.equal(trusted?.traceState?.serialize(), 'a=1,b=2');
    const untrusted = trace.getSpanContext(parentContext({ traceparent: SAMPLED, tracestate: 'a=1' }, false));
    assert.equal(untrusted?.traceId, TRACE, 'the trace continues');
    assert.equal(untrusted?.traceState, undefined);
  });

  it('ignores a malformed traceparent, or several (joined by Node), and keeps tracestate within the W3C limits', () => {
    for (const bad of ['garbage', `${SAMPLED}, ${SAMPLED}`, `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, `ff-${TRACE}-b7ad6b7169203331-01`]) {
      assert.equal(parentContext({ traceparent: bad }, true), ROOT_CONTEXT, bad);
    }
    const members = Array.from({ length: 100 }, (_, i) => `k${i}=v${i}`).join(',');
    const state = trace.getSpanContext(parentContext({ traceparent: SAMPLED, tracestate: members }, true))?.traceState?.serialize() ?? '';
    assert.ok(state.split(',').length <= 32 && state.length <= 512, `${state.split(',').length} members, ${state.length} characters`);
  });
});

describe('exportUrl', () => {
  it('appends /v1/traces to the base endpoint over HTTP, uses a traces endpoint as is, and defaults per protocol', () => {
    assert.equal(exportUrl({ endpoint: 'http://c:4318/', tracesEndpoint: undefined, protocol: 'http/protobuf' }), 'http://c:4318/v1/traces');
    assert.equal(exportUrl({ endpoint: 'http://c:4318', tracesEndpoint: 'http://c:9/x', protocol: 'http/json' }), 'http://c:9/x');
    assert.equal(exportUrl({ endpoint: undefined, tracesEndpoint: undefined, protocol: 'http/protobuf' }), 'http://localhost:4318/v1/traces');
    assert.equal(exportUrl({ endpoint: undefined, tracesEndpoint: undefined, protocol: 'grpc' }), 'http://localhost:4317');
  });
});

/** An exporter that answers each export with `result`, or never when `result` is undefined. */
class ScriptedExporter implements SpanExporter {
  readonly batches: number[] = [];
  result: ExportResult | undefined;
  constructor(result: ExportResult | undefined) {
    this.result = result;
  }
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.batches.push(spans.length);
    if (this.result !== undefined) done(this.result);
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const record = { requestId: 'r', route: '/v1/chat/completions', model: 'm', status: 200, durationMs: 1, bytes: 1 };

describe('createTracing', () => {
  it('drops spans past the queue bound instead of waiting, while an export hangs', async () => {
    const exporter = new ScriptedExporter(undefined);
    const tracing = await createTracing(tracingConfig({ maxQueueSize: 4, maxExportBatchSize: 2, scheduleDelayMs: 1 }), { headers: {}, version: 't', log: { warn: () => undefined, info: () => undefined }, exporter });
    for (let i = 0; i < 100; i++) tracing.tracer.start({ method: 'POST', route: '/v1/chat/completions', headers: {}, trustedParent: false, requestId: `r${i}`, at: performance.now() }).end(record, performance.now());
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(exporter.batches, [2], 'one batch in flight; the queue held 4 and the other 94 were dropped');
    const started = performance.now();
    await tracing.shutdown(200);
    assert.ok(performance.now() - started < 1_000, 'shutdown returns by its deadline although the collector never answers');
  });

  it('reports export failure once when it starts and once when it recovers', async () => {
    const exporter = new ScriptedExporter({ code: ExportResultCode.FAILED, error: new Error('ECONNREFUSED with secret header echoed') });
    const lines: string[] = [];
    const log = { warn: (fields: Record<string, unknown>, message: string) => lines.push(`warn ${message} ${JSON.stringify(fields)}`), info: (_fields: Record<string, unknown>, message: string) => lines.push(`info ${message}`) };
    const tracing = await createTracing(tracingConfig({ scheduleDelayMs: 1, maxExportBatchSize: 1 }), { headers: {}, version: 't', log, exporter });
    const oneSpan = async () => {
      tracing.tracer.start({ method: 'POST', route: '/v1/completions', headers: {}, trustedParent: false, requestId: 'r', at: performance.now() }).end(record, performance.now());
      await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await oneSpan();
    await oneSpan();
    exporter.result = { code: ExportResultCode.SUCCESS };
    await oneSpan();
    await tracing.shutdown(200);
    assert.equal(exporter.batches.length, 3);
    assert.deepEqual(lines.map((line) => line.split(' {')[0]), ['warn trace export failing; spans are dropped until the collector answers', 'info trace export recovered']);
    assert.ok(!lines.join('\n').includes('secret'), "the collector's error text is not logged");
  });
});

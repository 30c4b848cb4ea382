import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { configSchema } from '../config/schema.ts';
import { createTracing, exportUrl } from './otel-tracing.ts';

const tracingConfig = (overrides: Record<string, unknown> = {}) => configSchema.parse({ tracing: { enabled: true, ...overrides } }).tracing;

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

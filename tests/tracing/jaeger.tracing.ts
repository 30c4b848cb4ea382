/**
 * Tracing against a real trace backend: Jaeger v1.75.0's all-in-one (built
 * from the Go module proxy, cached by version), fed over OTLP by a client
 * span, the router and the engine simulator's `--otlp-traces-endpoint`,
 * and read back through Jaeger's query API.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { startJaeger, type Jaeger } from '../kit/jaeger/jaeger.ts';
import { spawnSwitchyard, type SwitchyardProcess } from '../kit/router-process.ts';
import { waitForModels } from '../kit/processes.ts';

const MODEL = 'm-traced';
const CHAT = { model: MODEL, stream: true, messages: [{ role: 'user', content: 'a prompt that must not reach a span' }] };

const newTraceId = () => randomBytes(16).toString('hex');
const newSpanId = () => randomBytes(8).toString('hex');

async function startRouter(flags: string[]): Promise<{ process: SwitchyardProcess; base: string }> {
  const process = await spawnSwitchyard(['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--tracing-enabled', ...flags]);
  const base = `http://127.0.0.1:${process.ports['traffic']}`;
  await waitForModels(base);
  return { process, base };
}

async function chat(base: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(CHAT) });
  assert.equal(response.status, 200);
  assert.match(await response.text(), /\[DONE\]/);
}

describe('tracing into Jaeger', () => {
  let jaeger: Jaeger;
  let engine: SwitchyardProcess;
  let engineUrl: string;
  let client: TracerProvider;
  before(async () => {
    jaeger = await startJaeger();
    engine = await spawnSwitchyard(['sim', '--listen', '127.0.0.1:0', '--model', MODEL, '--otlp-traces-endpoint', `${jaeger.otlpHttp}/v1/traces`, '--ttft-ms', '5'], { marker: 'engine simulator listening' });
    engineUrl = `http://127.0.0.1:${engine.ports['port']}`;
    client = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'client' }), spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${jaeger.otlpHttp}/v1/traces` }) })] });
  });
  after(async () => {
    await client?.shutdown();
    await engine?.stop();
    await jaeger?.stop();
  });

  for (const protocol of ['http/protobuf', 'http/json', 'grpc'] as const) {
    it(`shows client → router → engine as one trace, the engine's span the router span's child (OTLP ${protocol})`, async () => {
      const endpoint = protocol === 'grpc' ? jaeger.otlpGrpc : jaeger.otlpHttp;
      const router = await startRouter(['--backend', engineUrl, '--server-trusted-proxies', '127.0.0.1', '--tracing-protocol', protocol, '--tracing-endpoint', endpoint, '--tracing-schedule-delay-ms', '100']);
      try {
        const span = client.getTracer('test').startSpan('client chat', { kind: SpanKind.CLIENT });
        const { traceId, spanId } = span.spanContext();
        await chat(router.base, { traceparent: `00-${traceId}-${spanId}-01`, 'x-request-id': `jaeger-${protocol.replace('/', '-')}` });
        span.end();
        const spans = await jaeger.waitForSpans(traceId, 3);
        const routerSpan = spans.find((s) => s.service === 'switchyard');
        const engineSpan = spans.find((s) => s.service === 'engine-simulator');
        assert.ok(routerSpan !== undefined && engineSpan !== undefined, JSON.stringify(spans));
        assert.equal(routerSpan.parentSpanID, spanId, "the router span is the client span's child");
        assert.equal(engineSpan.parentSpanID, routerSpan.spanID, "the engine's span is the router span's child");
        assert.equal(routerSpan.operationName, 'POST /v1/chat/completions');
        assert.equal(routerSpan.tags['span.kind'], 'server');
        assert.equal(routerSpan.tags['http.response.status_code'], 200);
        assert.equal(routerSpan.tags['gen_ai.request.model'], MODEL);
        assert.deepEqual(routerSpan.events, ['switchyard.admitted', 'switchyard.scheduled', 'switchyard.first_byte']);
        assert.ok(!JSON.stringify(spans).includes('a prompt that must not'), 'no prompt in any span');
      } finally {
        await router.process.stop();
      }
    });
  }

  it("ignores an untrusted client's sampled flag: at ratio 0 neither the router nor the engine records its trace", async () => {
    const router = await startRouter(['--backend', engineUrl, '--tracing-sampler-arg', '0', '--tracing-endpoint', jaeger.otlpHttp, '--tracing-schedule-delay-ms', '100']);
    const traceId = newTraceId();
    try {
      await chat(router.base, { traceparent: `00-${traceId}-${newSpanId()}-01` });
    } finally {
      // SIGTERM flushes whatever the router queued; the engine exports every 200 ms.
      assert.equal(await router.process.stop(), 0);
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.deepEqual(await jaeger.trace(traceId), []);
  });

  it('exports the spans still queued at SIGTERM before the process exits', async () => {
    const router = await startRouter(['--backend', engineUrl, '--server-trusted-proxies', '127.0.0.1', '--tracing-endpoint', jaeger.otlpHttp, '--tracing-schedule-delay-ms', '600000']);
    const traceId = newTraceId();
    await chat(router.base, { traceparent: `00-${traceId}-${newSpanId()}-01` });
    const before = await jaeger.waitForSpans(traceId, 1);
    assert.deepEqual(before.map((s) => s.service), ['engine-simulator'], 'the router holds its span for the next export, ten minutes away');
    assert.equal(await router.process.stop(), 0);
    const spans = await jaeger.waitForSpans(traceId, 2, 5_000);
    assert.ok(spans.some((s) => s.service === 'switchyard'), JSON.stringify(spans));
  });
});

describe('exporter headers from tracing.headersFile', () => {
  it('are sent with every export and never logged, even when exports fail', async () => {
    const secret = `sk-collector-${randomBytes(8).toString('hex')}`;
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-tracing-'));
    const headersFile = join(dir, 'headers');
    writeFileSync(headersFile, `authorization=Bearer%20${secret},x-scope-orgid=team-a\n`);
    const seen: IncomingHttpHeaders[] = [];
    // The collector's side of OTLP/HTTP JSON: a 200 with an empty JSON body (a real socket, no Jaeger needed).
    const collector = createServer((req, res) => {
      seen.push(req.headers);
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const address = collector.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const engine = await spawnSwitchyard(['sim', '--listen', '127.0.0.1:0', '--model', MODEL, '--ttft-ms', '1'], { marker: 'engine simulator listening' });
    const router = await startRouter([
      '--backend', `http://127.0.0.1:${engine.ports['port']}`, '--log-level', 'debug', '--tracing-protocol', 'http/json',
      '--tracing-endpoint', `http://127.0.0.1:${port}`, '--tracing-headers-file', headersFile, '--tracing-schedule-delay-ms', '50',
      // The exporter retries a refused connection until the export times out; then the failure is reported.
      '--tracing-export-timeout-ms', '1000',
    ]);
    try {
      await chat(router.base, {});
      for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(seen[0]?.authorization, `Bearer ${secret}`);
      assert.equal(seen[0]?.['x-scope-orgid'], 'team-a');
      collector.closeAllConnections();
      await new Promise<void>((resolve) => collector.close(() => resolve()));
      await chat(router.base, {});
      for (let i = 0; i < 200 && !router.process.logs.some((line) => line['msg'] === 'trace export failing; spans are dropped until the collector answers'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(router.process.logs.some((line) => line['msg'] === 'trace export failing; spans are dropped until the collector answers'), 'the failure is reported');
      assert.ok(!JSON.stringify(router.process.logs).includes(secret), 'the header value is in no log line');
    } finally {
      await router.process.stop();
      await engine.stop();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { loadConfig } from '../../router/config/load.ts';
import { createTracing, type Tracing } from '../../router/tracing/otel-tracing.ts';
import { postJson, startFleet, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-trace';
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const SAMPLED = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;
const ENGINE = { model: MODEL, knobs: { ttftMs: 1, itlMs: 0, outputTokens: 2 } };
const silentLog = { warn: () => undefined, info: () => undefined };

/** The SDK's in-memory exporter, except that shutting the tracing down keeps what it exported (the SDK's clears it). */
class KeptSpans extends InMemorySpanExporter {
  override shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Tracing as `serve` builds it from these flags, with the SDK's in-memory exporter in place of OTLP. */
async function tracingFor(flags: string[]): Promise<{ tracing: Tracing; spans: InMemorySpanExporter }> {
  const loaded = loadConfig(['--tracing-enabled', '--tracing-schedule-delay-ms', '1', ...flags], {});
  if (loaded.kind !== 'config') throw new Error('unexpected help');
  const spans = new KeptSpans();
  return { tracing: await createTracing(loaded.config.tracing, { headers: {}, version: 'test', log: silentLog, exporter: spans }), spans };
}

const traceparentAt = (fleet: Fleet, requestId: string) => fleet.engines[0]?.received(requestId)?.headers['traceparent'];
const tracestateAt = (fleet: Fleet, requestId: string) => fleet.engines[0]?.received(requestId)?.headers['tracestate'];

async function exported(tracing: Tracing, spans: InMemorySpanExporter) {
  await tracing.shutdown(2_000);
  return spans.getFinishedSpans();
}

/**
 * W3C trace context through the router to a real engine simulator, and who
 * may decide sampling. The spans go to the OpenTelemetry SDK's own in-memory
 * exporter here; the export over OTLP to a real Jaeger is the tracing suite's
 * (tests/tracing).
 */
describe('trace context', () => {
  describe('with tracing off (the default)', () => {
    let fleet: Fleet;
    before(async () => (fleet = await startFleet([ENGINE])));
    after(() => fleet.close());

    it("passes the client's traceparent and tracestate to the engine untouched", async () => {
      const answer = await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, { traceparent: SAMPLED, tracestate: 'vendor=1', 'x-request-id': 'off-1' });
      assert.equal(answer.status, 200);
      assert.equal(traceparentAt(fleet, 'off-1'), SAMPLED);
      assert.equal(tracestateAt(fleet, 'off-1'), 'vendor=1');
    });
  });

  describe('with tracing on, sampling ratio 0, no trusted proxy', () => {
    let fleet: Fleet;
    let tracing: Tracing;
    let spans: InMemorySpanExporter;
    before(async () => {
      ({ tracing, spans } = await tracingFor(['--tracing-sampler-arg', '0']));
      fleet = await startFleet([ENGINE], [], [], { tracing });
    });
    after(() => fleet.close());

    it("ignores an untrusted client's sampled flag and tracestate, yet keeps its trace id", async () => {
      const answer = await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, { traceparent: SAMPLED, tracestate: 'vendor=1', 'x-request-id': 'untrusted-1' });
      assert.equal(answer.status, 200);
      const sent = traceparentAt(fleet, 'untrusted-1');
      assert.match(String(sent), new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-00$`), 'same trace, the router span, not sampled');
      assert.notEqual(String(sent).split('-')[2], CLIENT_SPAN, "the engine's parent is the router span, not the client's");
      assert.equal(tracestateAt(fleet, 'untrusted-1'), undefined, "an untrusted client's tracestate is not passed on");
      // A trace id whose bits pass every trace-id ratio does not force sampling either.
      await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, { traceparent: `00-${'0'.repeat(31)}1-${CLIENT_SPAN}-01`, 'x-request-id': 'untrusted-2' });
      assert.match(String(traceparentAt(fleet, 'untrusted-2')), /-00$/);
      assert.deepEqual(await exported(tracing, spans), [], 'no span was sampled');
    });
  });

  describe('with tracing on, sampling ratio 0, 127.0.0.1 a trusted proxy', () => {
    let fleet: Fleet;
    let tracing: Tracing;
    let spans: InMemorySpanExporter;
    before(async () => {
      ({ tracing, spans } = await tracingFor(['--tracing-sampler-arg', '0']));
      fleet = await startFleet([ENGINE], ['--server-trusted-proxies', '127.0.0.1'], [], { tracing });
    });
    after(() => fleet.close());

    it("follows a trusted proxy's sampled flag and tracestate, and the engine's parent is the router span", async () => {
      const answer = await postJson(`${fleet.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'a secret prompt' }] }, { traceparent: SAMPLED, tracestate: 'vendor=1', 'x-request-id': 'trusted-1', authorization: 'Bearer sk-not-for-spans' });
      assert.equal(answer.status, 200);
      const unknown = await postJson(`${fleet.base}/v1/chat/completions`, { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }, { traceparent: SAMPLED, 'x-request-id': 'trusted-2' });
      assert.equal(unknown.status, 404);
      const finished = await exported(tracing, spans);
      assert.equal(finished.length, 2);
      const [served, refused] = finished;
      assert.ok(served !== undefined && refused !== undefined);
      const sent = String(traceparentAt(fleet, 'trusted-1'));
      assert.equal(sent, `00-${CLIENT_TRACE}-${served.spanContext().spanId}-01`, 'the engine continues the router span');
      assert.equal(tracestateAt(fleet, 'trusted-1'), 'vendor=1');
      assert.equal(served.parentSpanContext?.spanId, CLIENT_SPAN);
      assert.equal(served.name, 'POST /v1/chat/completions');
      assert.equal(served.attributes['http.response.status_code'], 200);
      assert.equal(served.attributes['gen_ai.request.model'], MODEL);
      assert.equal(served.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(served.attributes['switchyard.request_id'], 'trusted-1');
      assert.equal(served.attributes['switchyard.endpoint'], fleet.engines[0]?.url);
      assert.deepEqual(served.events.map((event) => event.name), ['switchyard.admitted', 'switchyard.scheduled', 'switchyard.first_byte']);
      const everything = JSON.stringify([served.attributes, served.events]);
      assert.ok(!everything.includes('secret prompt') && !everything.includes('sk-not-for-spans'), 'no prompt or key in the span');
      assert.equal(refused.attributes['http.response.status_code'], 404);
      assert.equal(refused.attributes['error.type'], 'SWITCHYARD_MODEL_NOT_FOUND', "the router's own error code, as in the access log");
    });
  });
});

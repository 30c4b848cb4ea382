import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { CellCounter, CellHistogram } from './cell-metrics.ts';
import { E2E_BUCKETS_S } from './metrics.ts';

const labelValue = fc.constantFrom('/v1/chat/completions', '/v1/completions', 'llama', 'a"b\\c', 'x\ny', '');

describe('cell metrics', () => {
  it("a histogram renders what prom-client's renders for the same observations (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(labelValue, labelValue, fc.oneof(fc.double({ min: 0, max: 10_000, noNaN: true }), fc.constantFrom(...E2E_BUCKETS_S))), { maxLength: 40 }), async (observations) => {
        const [ours, theirs] = [new Registry(), new Registry()];
        const options = { name: 'switchyard_request_duration_seconds', help: 'End-to-end request duration.', labelNames: ['route', 'model'] as const, buckets: E2E_BUCKETS_S };
        const cells = new CellHistogram({ ...options, registry: ours });
        const reference = new Histogram({ ...options, labelNames: [...options.labelNames], registers: [theirs] });
        for (const [route, model, value] of observations) {
          cells.cell(route, model).observe(value);
          reference.labels(route, model).observe(value);
        }
        assert.equal(await ours.metrics(), await theirs.metrics());
        assert.deepEqual(JSON.parse(JSON.stringify(await ours.getMetricsAsJSON())), JSON.parse(JSON.stringify(await theirs.getMetricsAsJSON())));
      }),
      { numRuns: 200 },
    );
  });

  it("a counter renders what prom-client's renders for the same increments (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(labelValue, labelValue, fc.constantFrom('200', '429', '502')), { maxLength: 40 }), async (increments) => {
        const [ours, theirs] = [new Registry(), new Registry()];
        const options = { name: 'switchyard_requests_total', help: 'Requests answered.', labelNames: ['route', 'model', 'status'] };
        const cells = new CellCounter({ ...options, registry: ours });
        const reference = new Counter({ ...options, registers: [theirs] });
        for (const [route, model, status] of increments) {
          cells.cell(route, model, status).inc();
          reference.labels(route, model, status).inc();
        }
        assert.equal(await ours.metrics(), await theirs.metrics());
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a value that is not finite and the wrong number of label values, as prom-client does', () => {
    const histogram = new CellHistogram({ name: 'h_seconds', help: 'h', labelNames: ['route'], buckets: [1], registry: new Registry() });
    assert.throws(() => histogram.cell('/a').observe(Number.NaN), TypeError);
    assert.throws(() => histogram.cell('/a', 'extra'), /takes 1 label values/);
  });

  it('forgets its cells when the registry resets its metrics', async () => {
    const registry = new Registry();
    const counter = new CellCounter({ name: 'c_total', help: 'c', labelNames: ['route'], registry });
    counter.cell('/a').inc();
    registry.resetMetrics();
    assert.doesNotMatch(await registry.metrics(), /c_total\{/);
  });
});

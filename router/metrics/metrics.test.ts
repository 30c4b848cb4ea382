import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RouterMetrics, type BackendGauges, type MetricBackend } from './metrics.ts';

function fixture() {
  const backends: BackendGauges[] = [];
  const metrics = new RouterMetrics({
    backends: () => backends,
    routerInFlight: () => 0,
    connections: () => 0,
    eventLoopLagMs: () => 0,
    queueLength: () => 0,
    bufferedBodyBytes: () => 0,
  });
  const text = async () => (await metrics.registry.metrics()).split('\n').filter((line) => !line.startsWith('#'));
  const seriesOf = async (id: string) => (await text()).filter((line) => line.includes(`backend="${id}"`));
  return { metrics, text, seriesOf };
}

/** Every labelled write the router makes for an endpoint. */
function writeAll(metrics: RouterMetrics, backend: MetricBackend): void {
  metrics.countUpstreamError(backend, 'midstream');
  metrics.observeScrape(backend, 0.01, true);
  metrics.countEjection(backend);
}

describe('router metrics: backend series follow endpoint lifetime', () => {
  it('records writes for a present endpoint', async () => {
    const { metrics, seriesOf } = fixture();
    writeAll(metrics, { id: 'a', present: true });
    assert.deepEqual(await seriesOf('a'), [
      'switchyard_upstream_errors_total{backend="a",kind="midstream"} 1',
      'switchyard_scrape_failures_total{backend="a"} 1',
      'switchyard_ejections_total{backend="a"} 1',
    ]);
  });

  it('removes the series when the endpoint leaves, and drops every later write for it', async () => {
    const { metrics, text, seriesOf } = fixture();
    const state = { id: 'a', present: true };
    writeAll(metrics, state);
    writeAll(metrics, { id: 'b', present: true });
    state.present = false;
    metrics.forgetBackend(state);
    assert.deepEqual(await seriesOf('a'), []);
    writeAll(metrics, state);
    assert.deepEqual(await seriesOf('a'), [], 'a late scrape, stream error or ejection brings nothing back');
    assert.equal((await seriesOf('b')).length, 3, 'other endpoints keep theirs');
    assert.ok((await text()).includes('switchyard_scrape_duration_seconds_count 3'), 'scrape durations (no backend label) still count');
  });

  it('lets an endpoint that comes back (a new, present state with the same id) write again', async () => {
    const { metrics, seriesOf } = fixture();
    const old = { id: 'a', present: false };
    metrics.forgetBackend(old);
    writeAll(metrics, { id: 'a', present: true });
    writeAll(metrics, old);
    assert.deepEqual(await seriesOf('a'), [
      'switchyard_upstream_errors_total{backend="a",kind="midstream"} 1',
      'switchyard_scrape_failures_total{backend="a"} 1',
      'switchyard_ejections_total{backend="a"} 1',
    ]);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { EndpointAttributes } from '../load/endpoint-attributes.ts';
import { LORA_REQUESTS_INFO } from '../load/extractors/lora-requests-info.ts';
import { RouterMetrics, type BackendGauges, type MetricBackend } from './metrics.ts';

function fixture() {
  const backends: BackendGauges[] = [];
  const metrics = new RouterMetrics(sourcesOf(backends));
  const text = async () => (await metrics.registry.metrics()).split('\n').filter((line) => !line.startsWith('#'));
  const seriesOf = async (id: string) => (await text()).filter((line) => line.includes(`backend="${id}"`));
  return { metrics, text, seriesOf };
}

/** Every labelled write the router makes for an endpoint. */
function writeAll(metrics: RouterMetrics, backend: MetricBackend): void {
  metrics.countUpstreamError(backend, 'midstream');
  metrics.observeScrape(backend, 0.01, true);
  metrics.countEjection(backend);
  metrics.lora.countRequest(backend, 'sql-lora');
}

describe('router metrics: LoRA state per engine', () => {
  it("exports each engine's adapters running, waiting for a slot and slots, and the adapter starts seen, from its last scrape", async () => {
    const attributes = new EndpointAttributes();
    attributes.set(LORA_REQUESTS_INFO, { running: ['a', 'b'], waiting: ['b', 'c'], maxLora: 2, starts: 5, sentSinceScrape: new Set<string>() });
    const m = new RouterMetrics(sourcesOf([{ ...backend('lora'), attributes }, backend('plain')]));
    const lines = (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('switchyard_backend_lora_'));
    assert.deepEqual(lines, [
      'switchyard_backend_lora_running_adapters{backend="lora"} 2',
      'switchyard_backend_lora_waiting_adapters{backend="lora"} 1',
      'switchyard_backend_lora_max_adapters{backend="lora"} 2',
      'switchyard_backend_lora_adapter_starts_total{backend="lora"} 5',
    ]);
  });
});

describe('router metrics: backend series follow endpoint lifetime', () => {
  it('records writes for a present endpoint', async () => {
    const { metrics, seriesOf } = fixture();
    writeAll(metrics, { id: 'a', present: true });
    assert.deepEqual(await seriesOf('a'), [
      'switchyard_upstream_errors_total{backend="a",kind="midstream"} 1',
      'switchyard_scrape_failures_total{backend="a"} 1',
      'switchyard_ejections_total{backend="a"} 1',
      'switchyard_lora_requests_total{backend="a",adapter="sql-lora"} 1',
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
    assert.equal((await seriesOf('b')).length, 4, 'other endpoints keep theirs');
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
      'switchyard_lora_requests_total{backend="a",adapter="sql-lora"} 1',
    ]);
  });
});

/** A backend as the load view reports it, with what the alerts read. */
function backend(id: string, over: Partial<BackendGauges> = {}): BackendGauges {
  return {
    id,
    inFlight: 0,
    scraped: undefined,
    stale: false,
    estimatedWaiting: 0,
    loadScore: 0,
    ejected: false,
    scrapeAgeMs: 0,
    routable: true,
    endpoint: { models: ['m'] },
    ...over,
  };
}

describe('router metrics: what the alert rules read', () => {
  it('exports every background task at 0 before its first failure (regression: no series until then, so the dashboard panel was empty and increase() missed the first failure)', async () => {
    const { metrics, text } = fixture();
    const lines = (await text()).filter((line) => line.startsWith('switchyard_background_failures_total'));
    assert.ok(lines.includes('switchyard_background_failures_total{task="safe_start_share"} 0'), lines.join('\n'));
    assert.ok(lines.length >= 6);
    metrics.countBackgroundFailure('fleet_publish');
    assert.ok((await text()).includes('switchyard_background_failures_total{task="fleet_publish"} 1'));
  });

  it('exports scrape age in seconds and routability per backend', async () => {
    const { text } = fixture();
    const backends = [backend('a', { scrapeAgeMs: 1_500 }), backend('b', { scrapeAgeMs: 42_000, routable: false })];
    const m = new RouterMetrics(sourcesOf(backends));
    const lines = (await m.registry.metrics()).split('\n');
    assert.ok(lines.includes('switchyard_backend_scrape_age_seconds{backend="a"} 1.5'));
    assert.ok(lines.includes('switchyard_backend_scrape_age_seconds{backend="b"} 42'));
    assert.ok(lines.includes('switchyard_backend_routable{backend="a"} 1'));
    assert.ok(lines.includes('switchyard_backend_routable{backend="b"} 0'));
    assert.equal((await text()).filter((l) => l.startsWith('switchyard_backend_scrape_age_seconds')).length, 0, 'no backends, no series');
  });

  it('counts per model the endpoints that can take its requests: not ready, draining and ejected ones read 0', async () => {
    const backends = [
      backend('a', { endpoint: { models: ['m', 'n'] } }),
      backend('b', { endpoint: { models: ['m'] }, ejected: true }),
      backend('c', { endpoint: { models: ['n'] }, routable: false }),
      backend('d', { endpoint: { models: ['o'] }, routable: false }),
      backend('e', { endpoint: { models: undefined }, routable: false }),
    ];
    const m = new RouterMetrics(sourcesOf(backends));
    const lines = (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('switchyard_model_ready_endpoints'));
    assert.deepEqual(lines.sort(), [
      'switchyard_model_ready_endpoints{model="m"} 1',
      'switchyard_model_ready_endpoints{model="n"} 1',
      'switchyard_model_ready_endpoints{model="o"} 0',
    ]);
    backends.splice(3, 1);
    const after = (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('switchyard_model_ready_endpoints'));
    assert.equal(after.length, 2, 'a model no endpoint claims any more leaves no series');
  });

  it('records time to first token in its own histogram, on the TTFT bucket bounds', async () => {
    const { metrics, text } = fixture();
    metrics.observeFirstToken('/v1/chat/completions', 'm', 0.3);
    metrics.observeFirstToken('/v1/chat/completions', 'm', 3);
    const lines = await text();
    assert.ok(lines.includes('switchyard_time_to_first_token_seconds_bucket{le="2.5",route="/v1/chat/completions",model="m"} 1'));
    assert.ok(lines.includes('switchyard_time_to_first_token_seconds_count{route="/v1/chat/completions",model="m"} 2'));
    assert.equal(lines.filter((l) => l.startsWith('switchyard_time_to_first_byte_seconds_count')).length, 0, 'the first-byte histogram is left alone');
  });
});

function sourcesOf(backends: readonly BackendGauges[]) {
  return {
    backends: () => backends,
    routerInFlight: () => 0,
    connections: () => 0,
    eventLoopLagMs: () => 0,
    queueLength: () => 0,
    bufferedBodyBytes: () => 0,
  };
}

describe('router metrics: a valid exposition however often it is scraped', () => {
  it('regression: two scrapes within one sampling tick rendered `Nan` and a 9223372036 s event-loop lag minimum', async () => {
    const { text } = fixture();
    for (let scrape = 0; scrape < 3; scrape++) {
      for (const line of await text()) {
        if (line === '') continue;
        const value = line.slice(line.lastIndexOf(' ') + 1);
        assert.ok(value === 'NaN' || value === '+Inf' || value === '-Inf' || Number.isFinite(Number(value)), `not a format value: ${line}`);
        if (line.startsWith('nodejs_eventloop_lag')) assert.ok(Number(value) < 60, `an event-loop lag of ${value} s: ${line}`);
      }
    }
  });
});

describe('router metrics: build info', () => {
  it('names the package version and the Node.js version', async () => {
    const { text } = fixture();
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.ok((await text()).includes(`switchyard_build_info{version="${version}",node_version="${process.version}"} 1`));
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { renderMetrics, TtftHistogram } from '../../loadtest/sim/metrics-text.ts';
import { TTFT_BUCKETS_S } from '../../router/metrics/metrics.ts';
import { routerMetricCatalog, type MetricCatalog } from '../router-metric-catalog.ts';
import { OUTPUT_DIR, renderDashboards } from './dashboards.ts';
import { selectors } from './promql-selectors.ts';

interface Target {
  readonly expr: string;
  readonly refId: string;
  readonly datasource?: { readonly type: string; readonly uid: string };
}
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly description?: string;
  readonly datasource?: { readonly type: string; readonly uid: string };
  readonly targets?: readonly Target[];
}
interface Variable {
  readonly name: string;
  readonly type: string;
  readonly query: string;
  readonly options?: readonly { readonly value: string }[];
  readonly allowCustomValue?: boolean;
  readonly multi?: boolean;
  readonly includeAll?: boolean;
  readonly allValue?: string;
}
interface Dashboard {
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly Variable[] };
}

const rendered = renderDashboards();
const dashboards = [...rendered].map(([file, json]) => ({ file, json, model: JSON.parse(json) as Dashboard }));
const panels = dashboards.flatMap((d) => d.model.panels.filter((p) => p.type !== 'row').map((panel) => ({ file: d.file, panel })));
const targets = panels.flatMap(({ file, panel }) => (panel.targets ?? []).map((target) => ({ where: `${file}: "${panel.title}" ${target.refId}`, target })));

type Catalog = MetricCatalog;

/** The router series with a `pool` label (namespace/name of an InferencePool): filtered by the pool variable wherever read. */
const POOL_SERIES = ['switchyard_inference_pool_ready', 'switchyard_inference_pool_endpoints'];
/** The Gateway API Inference Extension series the dashboards must show. */
const INFERENCE_EXTENSION_SERIES = [...POOL_SERIES, 'switchyard_model_rewrites_total', 'switchyard_inference_objective_unknown_total'];

/** The router's catalogue, checked to have read the metric types. */
async function routerCatalog(): Promise<Catalog> {
  const catalog = await routerMetricCatalog();
  assert.ok(catalog.get('switchyard_requests_total')?.cumulative === true && catalog.get('switchyard_in_flight_requests')?.cumulative === false, 'metric types read');
  return catalog;
}

/** The series the engine simulator's /metrics exposes, typed by its `# TYPE` lines. */
function engineCatalog(): Catalog {
  const text = renderMetrics({ model: 'm', running: 1, waiting: 1, kvCacheUsage: 0.5, ttft: new TtftHistogram(), requestsSucceeded: 1, prefixCacheQueries: 1, prefixCacheHits: 1 });
  const types = new Map<string, string>();
  const catalog: Catalog = new Map();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type !== null) types.set(type[1] as string, type[2] as string);
    if (line === '' || line.startsWith('#')) continue;
    const name = /^[^{ ]+/.exec(line)?.[0] as string;
    const family = [...types.keys()].find((f) => name === f || name.startsWith(`${f}_`)) ?? name;
    const type_ = types.get(family);
    catalog.set(name, { cumulative: type_ === 'counter' || type_ === 'histogram' });
  }
  return catalog;
}

describe('dashboards: generated from charts/dashboards/*.ts', () => {
  it('the committed JSON is what the source generates (run npm run dashboards:generate)', () => {
    for (const { file, json } of dashboards) {
      const committed = readFileSync(new URL(file, OUTPUT_DIR), 'utf8');
      assert.ok(committed === json, `charts/switchyard/dashboards/${file} differs from the generated dashboard: run npm run dashboards:generate`);
    }
    const onDisk = readdirSync(OUTPUT_DIR).filter((f) => f.endsWith('.json')).sort();
    assert.deepEqual(onDisk, [...rendered.keys()].sort(), 'no dashboard JSON without a source');
  });

  it('every metric a panel queries exists: in the router registry, or among the engine metrics the simulator exports', async () => {
    const router = await routerCatalog();
    const engine = engineCatalog();
    let checked = 0;
    for (const { where, target } of targets) {
      for (const s of selectors(target.expr)) {
        const known = s.metric.startsWith('vllm:') ? engine.get(s.metric) : router.get(s.metric);
        assert.ok(known !== undefined, `${where}: ${s.metric} is not exported (renamed or removed?)`);
        checked++;
      }
    }
    assert.ok(checked >= targets.length, 'every query reads at least one metric');
  });

  it('reads counters and histograms only through a range (rate/increase), never as lifetime sums; gauges never through one', async () => {
    const catalog = new Map([...(await routerCatalog()), ...engineCatalog()]);
    for (const { where, target } of targets) {
      for (const s of selectors(target.expr)) {
        const cumulative = catalog.get(s.metric)?.cumulative;
        if (cumulative === true) assert.ok(s.ranged, `${where}: ${s.metric} is cumulative; read it through rate() or increase()`);
        if (cumulative === false) assert.ok(!s.ranged, `${where}: ${s.metric} is a gauge; a range over it is a mistake`);
      }
    }
  });

  it('never sums what every replica reports about the same engine or InferencePool (only per-replica work is summed across replicas)', () => {
    // switchyard_backend_in_flight_requests is each replica's own work: its sum is the fleet's.
    // Every replica watches the same InferencePool, so its pool gauges are views of one pool too.
    const perEngineView = /\bsum\s*(?:by\s*\(([^)]*)\))?\s*\(\s*switchyard_(?:backend_(?!in_flight_requests)|inference_pool_)\w+/g;
    for (const { where, target } of targets) {
      for (const match of target.expr.matchAll(perEngineView)) {
        const by = (match[1] ?? '').split(',').map((l) => l.trim());
        assert.ok(by.includes('pod'), `${where}: ${match[0]} sums a per-engine (or per-pool) view across replicas; use max/min/avg by (backend) or by (pool)`);
      }
    }
  });

  it('filters every router series by namespace, job and pod, and every engine series by namespace and model', () => {
    for (const { where, target } of targets) {
      for (const s of selectors(target.expr)) {
        const wanted = s.metric.startsWith('vllm:') ? ['namespace=~"$engine_namespace"', 'model_name=~"$model"'] : ['namespace=~"$namespace"', 'job=~"$job"', 'pod=~"$pod"'];
        if (POOL_SERIES.includes(s.metric)) wanted.push('pool=~"$pool"');
        for (const matcher of wanted) assert.ok(s.matchers.includes(matcher), `${where}: ${s.metric} lacks ${matcher}`);
      }
    }
  });

  it('offers the pool variable on both dashboards and shows every Gateway API Inference Extension series, pool series filtered by it', () => {
    for (const { file, model } of dashboards) {
      const pool = model.templating.list.find((v) => v.name === 'pool');
      assert.equal(pool?.type, 'query', `${file} lacks the pool variable`);
      assert.equal(pool?.query, 'label_values(switchyard_inference_pool_ready{namespace=~"$namespace", job=~"$job", pod=~"$pod"}, pool)', file);
      assert.ok(pool?.multi === true && pool.includeAll === true && pool.allValue === '.*', `${file}: pool is multi-value with All = .*`);
    }
    const reads = (metric: string, file?: string) =>
      targets.some(({ where, target }) => (file === undefined || where.startsWith(`${file}:`)) && selectors(target.expr).some((s) => s.metric === metric && (!POOL_SERIES.includes(metric) || s.matchers.includes('pool=~"$pool"'))));
    for (const metric of INFERENCE_EXTENSION_SERIES) assert.ok(reads(metric), `no panel reads ${metric}${POOL_SERIES.includes(metric) ? ' filtered by $pool' : ''}`);
    assert.ok(reads('switchyard_inference_pool_endpoints', 'switchyard-engines.json'), 'the engines dashboard shows endpoints per pool');
  });

  it('uses the datasource variable everywhere: no __inputs, no ${DS_...} placeholders', () => {
    for (const { file, json, model } of dashboards) {
      assert.ok(!json.includes('__inputs') && !json.includes('${DS_'), `${file} has an import placeholder the Grafana sidecar cannot resolve`);
      const ds = model.templating.list.find((v) => v.name === 'datasource');
      assert.equal(ds?.type, 'datasource');
      assert.equal(ds?.query, 'prometheus');
      for (const name of ['namespace', 'job', 'pod', 'model']) assert.ok(model.templating.list.some((v) => v.name === name), `${file} lacks the ${name} variable`);
    }
    for (const { file, panel } of panels) assert.equal(panel.datasource?.uid, '${datasource}', `${file}: "${panel.title}"`);
    for (const { where, target } of targets) assert.equal(target.datasource?.uid, '${datasource}', where);
  });

  it('offers only the TTFT histogram bucket bounds as SLO targets', () => {
    const router = dashboards.find((d) => d.file === 'switchyard-router.json')?.model;
    const slo = router?.templating.list.find((v) => v.name === 'ttft_slo');
    assert.equal(slo?.allowCustomValue, false);
    assert.deepEqual(
      slo?.options?.map((o) => Number(o.value)),
      TTFT_BUCKETS_S,
    );
    assert.ok(targets.some(({ target }) => target.expr.includes('switchyard_time_to_first_token_seconds_bucket') && target.expr.includes('le=~"${ttft_slo}')));
  });

  it('gives every panel a description, a unique id and uniquely named queries', () => {
    for (const { file, model } of dashboards) {
      const ids = model.panels.map((p) => p.id);
      assert.equal(new Set(ids).size, ids.length, `${file}: duplicate panel ids`);
    }
    for (const { file, panel } of panels) {
      assert.ok((panel.description ?? '').length > 20, `${file}: "${panel.title}" needs a description`);
      const refIds = (panel.targets ?? []).map((t) => t.refId);
      assert.ok(refIds.length > 0 && new Set(refIds).size === refIds.length, `${file}: "${panel.title}" refIds`);
    }
  });
});

describe('PromQL selector lexer', () => {
  it('finds metrics (colons included), their matchers and ranges, and skips functions, label lists and strings', () => {
    const found = selectors(
      'histogram_quantile(0.99, sum by (le, model) (rate(vllm:time_to_first_token_seconds_bucket{a="x{y}", b=~"(\\\\.0)?"}[$__rate_interval]))) / on (pod) group_left (x) sum without (le) (up offset 5m) > bool 0 and time() - last_ts',
    );
    assert.deepEqual(
      found.map((s) => [s.metric, s.ranged]),
      [
        ['vllm:time_to_first_token_seconds_bucket', true],
        ['up', false],
        ['last_ts', false],
      ],
    );
    assert.equal(found[0]?.matchers, 'a="x{y}", b=~"(\\\\.0)?"');
  });

  it('throws on an unbalanced expression', () => {
    assert.throws(() => selectors('rate(x{a="b"[5m])'), /unbalanced|unterminated/);
  });
});

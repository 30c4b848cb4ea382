/**
 * Template variables the dashboards share. The datasource is a variable, not
 * an `__inputs` placeholder, because the Grafana sidecar that loads the
 * chart's ConfigMaps cannot resolve `${DS_...}`. Label variables default to
 * All (`.*`), so a Prometheus without `namespace`/`pod` target labels still
 * shows everything.
 */
import type { Builder } from '@grafana/grafana-foundation-sdk/cog';
import {
  CustomVariableBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  VariableRefresh,
  VariableSort,
  type VariableModel,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { TTFT_BUCKETS_S } from '../../router/metrics/metrics.ts';
import { DATASOURCE } from './panels.ts';
import { ROUTER, series } from './promql.ts';

const ALL = { text: 'All', value: '$__all' };

/** The Prometheus datasource picker. */
export function datasourceVariable(): Builder<VariableModel> {
  return new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus');
}

/** A multi-value label variable read from `label_values(selector, label)`, defaulting to All. */
export function labelVariable(name: string, label: string, selector: string, labelName: string): Builder<VariableModel> {
  const query = `label_values(${selector}, ${labelName})`;
  return new QueryVariableBuilder(name)
    .label(label)
    .datasource(DATASOURCE)
    .query(query)
    .definition(query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue('.*')
    .current(ALL);
}

/** namespace, job, pod and model of the router replicas, each narrowing the next. */
export function routerVariables(): Builder<VariableModel>[] {
  return [
    labelVariable('namespace', 'Namespace', 'switchyard_in_flight_requests', 'namespace'),
    labelVariable('job', 'Job', 'switchyard_in_flight_requests{namespace=~"$namespace"}', 'job'),
    labelVariable('pod', 'Router pod', 'switchyard_in_flight_requests{namespace=~"$namespace", job=~"$job"}', 'pod'),
    labelVariable('model', 'Model', 'switchyard_requests_total{namespace=~"$namespace", job=~"$job"}', 'model'),
  ];
}

/**
 * The InferencePools (`namespace/name`) the router replicas discover engines
 * through, as their `inferencepool` sources report them. A router without
 * such a source exports no pool series, so the variable offers nothing and
 * the pool panels stay empty.
 */
export function poolVariable(): Builder<VariableModel> {
  return labelVariable('pool', 'InferencePool', series('switchyard_inference_pool_ready', ROUTER), 'pool');
}

/**
 * The TTFT SLO target, restricted to the TTFT histogram's bucket bounds:
 * attainment is read from one bucket, so a target between two bounds would
 * silently mean the lower one.
 */
export function ttftSloVariable(defaultSeconds = 1): Builder<VariableModel> {
  if (!TTFT_BUCKETS_S.includes(defaultSeconds)) throw new Error(`TTFT SLO default ${defaultSeconds} s is not a TTFT bucket bound`);
  const values = TTFT_BUCKETS_S.map(String);
  return new CustomVariableBuilder('ttft_slo')
    .label('TTFT SLO target (s)')
    .description('Time-to-first-token target; only the router TTFT histogram bucket bounds are offered.')
    .values(values.join(','))
    .options(values.map((value) => ({ text: value, value, selected: value === String(defaultSeconds) })))
    .current({ text: String(defaultSeconds), value: String(defaultSeconds) })
    .allowCustomValue(false)
    .multi(false)
    .includeAll(false);
}

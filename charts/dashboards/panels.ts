/**
 * Dashboards as plain data (rows of panels of PromQL queries) turned into
 * Grafana JSON with the foundation SDK. Panels get stable ids and refIds in
 * order, so the generated JSON only changes when a panel does.
 */
import type { Builder } from '@grafana/grafana-foundation-sdk/cog';
import { LegendDisplayMode, LegendPlacement, ReduceDataOptionsBuilder, SortOrder, TooltipDisplayMode, VizLegendOptionsBuilder, VizTooltipOptionsBuilder } from '@grafana/grafana-foundation-sdk/common';
import { DashboardBuilder, DashboardCursorSync, RowBuilder, type Dashboard, type VariableModel } from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

/** Every panel and query reads the datasource the `datasource` variable picks (no `__inputs`). */
export const DATASOURCE = { type: 'prometheus', uid: '${datasource}' } as const;

/** One PromQL query of a panel. */
export interface QuerySpec {
  readonly expr: string;
  /** Grafana legend template, e.g. `{{model}} {{status}}`. */
  readonly legend: string;
}

/** One panel. */
export interface PanelSpec {
  readonly title: string;
  /** What it shows and how to read it (the panel's info tooltip). */
  readonly description: string;
  /** Grafana unit id: `reqps`, `s`, `percentunit`, `short`, `bytes`, ... */
  readonly unit: string;
  readonly queries: readonly QuerySpec[];
  /** Default: a time series. */
  readonly kind?: 'timeseries' | 'stat';
  /** Grid columns (of 24); default 12. */
  readonly width?: number;
  readonly min?: number;
  readonly max?: number;
}

/** A titled row of panels. */
export interface RowSpec {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

/** A whole dashboard. */
export interface DashboardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly variables: readonly Builder<VariableModel>[];
  readonly rows: readonly RowSpec[];
}

const PANEL_HEIGHT = 8;
const REF_IDS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Builds the dashboard JSON model. */
export function buildDashboard(spec: DashboardSpec): Dashboard {
  const builder = new DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags(['switchyard'])
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-1h', to: 'now' })
    .timezone('browser')
    .refresh('30s')
    .variables([...spec.variables]);
  let id = 0;
  for (const row of spec.rows) {
    builder.withRow(new RowBuilder(row.title).id(++id));
    for (const panel of row.panels) builder.withPanel(panelBuilder(panel).id(++id));
  }
  return builder.build();
}

function panelBuilder(spec: PanelSpec): TimeseriesPanelBuilder | StatPanelBuilder {
  const panel = spec.kind === 'stat' ? stat() : timeseries();
  panel
    .title(spec.title)
    .description(spec.description)
    .datasource(DATASOURCE)
    .unit(spec.unit)
    .span(spec.width ?? 12)
    .height(PANEL_HEIGHT);
  if (spec.min !== undefined) panel.min(spec.min);
  if (spec.max !== undefined) panel.max(spec.max);
  spec.queries.forEach((query, i) => {
    panel.withTarget(
      new DataqueryBuilder()
        .datasource(DATASOURCE)
        .refId(REF_IDS[i] ?? `Q${i}`)
        .expr(query.expr)
        .legendFormat(query.legend),
    );
  });
  return panel;
}

function stat(): StatPanelBuilder {
  // The latest value, not a reduction over the time range.
  return new StatPanelBuilder().reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false)).decimals(0);
}

function timeseries(): TimeseriesPanelBuilder {
  return new TimeseriesPanelBuilder()
    .legend(new VizLegendOptionsBuilder().showLegend(true).displayMode(LegendDisplayMode.List).placement(LegendPlacement.Bottom))
    .tooltip(new VizTooltipOptionsBuilder().mode(TooltipDisplayMode.Multi).sort(SortOrder.Descending))
    .fillOpacity(10)
    .lineWidth(1);
}

/** Stable, pretty JSON of a dashboard, as committed under charts/switchyard/dashboards/. */
export function dashboardJson(dashboard: Dashboard): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}

/**
 * Every dashboard the chart ships, by the file it is generated into under
 * charts/switchyard/dashboards/ (one ConfigMap per file when
 * `dashboards.enabled`).
 */
import { enginesDashboard } from './engines.ts';
import { buildDashboard, dashboardJson, type DashboardSpec } from './panels.ts';
import { routerOverview } from './router-overview.ts';

/** File name → dashboard source. */
export const DASHBOARDS: ReadonlyMap<string, () => DashboardSpec> = new Map([
  ['switchyard-router.json', routerOverview],
  ['switchyard-engines.json', enginesDashboard],
]);

/** Where the generated JSON is committed. */
export const OUTPUT_DIR = new URL('../switchyard/dashboards/', import.meta.url);

/** File name → the exact JSON text the generator writes. */
export function renderDashboards(): Map<string, string> {
  return new Map([...DASHBOARDS].map(([file, spec]) => [file, dashboardJson(buildDashboard(spec()))]));
}

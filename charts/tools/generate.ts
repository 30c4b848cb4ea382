/**
 * `npm run charts:generate`: rewrites what the chart generates from code:
 * charts/switchyard/values.schema.json, the values reference in
 * docs/install.md, and (when its generator exists) the Grafana dashboards.
 * Tests fail when the committed files differ from what this writes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CHART_DIR, INSTALL_DOC, withReference } from './values-reference.ts';
import { renderValuesSchema } from './values-schema.ts';

writeFileSync(`${CHART_DIR}values.schema.json`, renderValuesSchema());
writeFileSync(INSTALL_DOC, withReference(readFileSync(INSTALL_DOC, 'utf8')));

const dashboards = fileURLToPath(new URL('../dashboards/generate.ts', import.meta.url));
if (existsSync(dashboards)) {
  const result = spawnSync(process.execPath, [dashboards], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * Writes the dashboards into charts/switchyard/dashboards/ (`npm run
 * dashboards:generate`). The JSON there is generated: edit the TypeScript
 * under charts/dashboards/ and run this; a test fails while the two differ.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { OUTPUT_DIR, renderDashboards } from './dashboards.ts';

mkdirSync(OUTPUT_DIR, { recursive: true });
for (const [file, json] of renderDashboards()) {
  writeFileSync(new URL(file, OUTPUT_DIR), json);
  process.stdout.write(`wrote charts/switchyard/dashboards/${file}\n`);
}

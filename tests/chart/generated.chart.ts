/**
 * What the chart generates from code must match what is committed: the
 * values schema (whose `config` part is the router's config schema) and the
 * values reference in docs/install.md. `npm run charts:generate` rewrites both.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { configSchema } from '../../router/config/schema.ts';
import { CHART_DIR, defaultValues, INSTALL_DOC, withReference } from '../../charts/tools/values-reference.ts';
import { CHART_OWNED_CONFIG_KEYS, renderValuesSchema, valuesSchema, type JsonSchema } from '../../charts/tools/values-schema.ts';

describe('chart: generated files', () => {
  it('values.schema.json is what charts/tools/values-schema.ts generates (run `npm run charts:generate`)', () => {
    assert.equal(readFileSync(`${CHART_DIR}values.schema.json`, 'utf8'), renderValuesSchema());
  });

  it('the values reference in docs/install.md is current (run `npm run charts:generate`)', () => {
    const doc = readFileSync(INSTALL_DOC, 'utf8');
    assert.equal(doc, withReference(doc));
  });

  it('the config part carries every router option but the chart-owned ones, with the router\'s defaults', () => {
    const router = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    const chart = valuesSchema().properties?.['config'] as JsonSchema;
    const routerKeys = Object.keys(router.properties ?? {}).filter((k) => !(CHART_OWNED_CONFIG_KEYS as readonly string[]).includes(k));
    assert.deepEqual(Object.keys(chart.properties ?? {}), routerKeys);
    const timeouts = chart.properties?.['timeouts']?.properties?.['connectMs'];
    assert.equal(timeouts?.default, 5_000);
  });

  it('every inline secret of the router schema is refused in the chart schema', () => {
    const refused: string[] = [];
    const visit = (node: JsonSchema, path: string): void => {
      for (const [key, child] of Object.entries(node.properties ?? {})) {
        if (key === 'apiKey') {
          assert.deepEqual(child.not, {}, `${path}.${key} refused`);
          refused.push(`${path}.${key}`);
        }
        visit(child, `${path}.${key}`);
      }
      if (typeof node.additionalProperties === 'object') visit(node.additionalProperties, `${path}.*`);
    };
    visit(valuesSchema().properties?.['config'] as JsonSchema, 'config');
    assert.deepEqual(refused.sort(), ['config.discovery.apiKey', 'config.discovery.sources.*.apiKey', 'config.discovery.static.apiKey', 'config.upstream.apiKey']);
  });

  it('every value in values.yaml is declared and described by the schema', () => {
    const walk = (values: unknown, node: JsonSchema | undefined, path: string): void => {
      assert.ok(node, `${path} is in the schema`);
      assert.ok(path === '' || path.startsWith('config') || (node.description ?? '') !== '', `${path} has a description`);
      if (path.startsWith('config') || typeof values !== 'object' || values === null || Array.isArray(values) || node.properties === undefined) return;
      for (const [key, child] of Object.entries(values)) walk(child, node.properties[key], path === '' ? key : `${path}.${key}`);
    };
    walk(defaultValues(), valuesSchema(), '');
  });
});

/**
 * The scheduling plugins in the chart's values schema: a profile's
 * `filters`, `scorers` and `affinity` entries name registered plugins, each
 * with its own parameter schema, so `helm install` refuses an unknown name
 * or a bad parameter as the router does at load (router/scheduling/profiles/registry.ts).
 */
import { z } from 'zod';
import { builtInPlugins } from '../../router/scheduling/profiles/plugins.ts';
import type { DescribedPlugin } from '../../router/scheduling/plugin.ts';
import type { JsonSchema } from './values-schema.ts';

/** Narrows `profile` (the schema of one `routing.profiles` entry) to the registered plugins, in place. */
export function withPluginSchemas(profile: JsonSchema): void {
  const plugins = builtInPlugins();
  const fields = profile.properties as Record<string, JsonSchema>;
  for (const [field, registered] of [['filters', plugins.filters], ['affinity', plugins.affinities]] as const) {
    (fields[field] as JsonSchema).items = registered.length === 0 ? { not: {}, description: `No ${field === 'filters' ? 'filter' : 'walk'} is built in yet.` } : byNameOrWithParameters(registered);
  }
  const scorers = fields['scorers'] as JsonSchema;
  const weight = (scorers.items as JsonSchema).properties?.['weight'] as JsonSchema;
  scorers.items = { anyOf: plugins.scorers.map((plugin) => entry(plugin, { weight }, ['name', 'weight'])) };
}

/** A plugin's name alone, or `{name, parameters}` with its parameters checked. */
function byNameOrWithParameters(plugins: readonly DescribedPlugin[]): JsonSchema {
  return { anyOf: [{ type: 'string', enum: plugins.map((plugin) => plugin.name) }, ...plugins.map((plugin) => entry(plugin, {}, ['name']))] };
}

function entry(plugin: DescribedPlugin, extra: Record<string, JsonSchema>, required: string[]): JsonSchema {
  const parameters = z.toJSONSchema(plugin.parameters, { io: 'input' }) as JsonSchema;
  delete parameters['$schema'];
  return {
    type: 'object',
    description: plugin.description,
    properties: { name: { const: plugin.name }, ...extra, parameters },
    required,
    additionalProperties: false,
  };
}

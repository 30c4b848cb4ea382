/**
 * The scheduling plugins' section of the configuration reference
 * (docs/configuration.md), rendered from a registry: each plugin's name,
 * description and parameters come from its own definition, so a new scorer
 * or walk documents itself and no list of names is kept by hand.
 */
import { z } from 'zod';
import type { DescribedPlugin } from '../plugin.ts';
import type { PluginRegistry } from './registry.ts';

/** The Markdown lines of the section. */
export function pluginReference(plugins: PluginRegistry): string[] {
  return [
    '## Scheduling plugins',
    '',
    'A profile in `routing.profiles` names its filters, scorers and affinity walks from these, with their',
    'parameters; a name or parameter that is not here is a configuration error.',
    '',
    '### Filters (`filters: [name | {name, parameters}]`)',
    '',
    'Run in order after the built-in filters (ready, not ejected, the engine of a pinned response); each narrows the',
    'candidates and is passed over when it would keep none.',
    '',
    ...(plugins.filters.length === 0 ? ['None is built in yet.'] : table(plugins.filters)),
    '',
    '### Scorers (`scorers: [{name, weight, parameters}]`)',
    '',
    ...table(plugins.scorers),
    '',
    '### Affinity walks (`affinity: [name | {name, parameters}]`)',
    '',
    ...table(plugins.affinities),
  ];
}

function table(plugins: readonly DescribedPlugin[]): string[] {
  return ['| name | what it does | parameters |', '|---|---|---|', ...plugins.map((plugin) => `| \`${plugin.name}\` | ${cell(plugin.description)} | ${cell(parameterText(plugin.parameters))} |`)];
}

/** `name`: description, for each field of an object schema; "none" when it has none. */
function parameterText(parameters: z.ZodType): string {
  const fields = parameters instanceof z.ZodObject ? Object.entries(parameters.shape) : [];
  if (fields.length === 0) return 'none';
  return fields.map(([name, field]) => `\`${name}\`: ${z.globalRegistry.get(field)?.description ?? '(undocumented)'}`).join(' ');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

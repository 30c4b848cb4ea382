/**
 * `npm run docs:config`: writes docs/configuration.md, the option table
 * rendered from the config schema and the scheduling plugins' section from
 * the built-in plugin registry.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { REFERENCE_PATH, renderReference } from '../config/reference.ts';
import { pluginReference } from '../scheduling/profiles/plugin-reference.ts';
import { builtInPlugins } from '../scheduling/profiles/plugins.ts';

/** The whole document as the code describes it now. */
export function configurationReference(): string {
  return renderReference(pluginReference(builtInPlugins()));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(REFERENCE_PATH, configurationReference());
}

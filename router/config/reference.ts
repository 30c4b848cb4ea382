/**
 * Renders the configuration reference (docs/configuration.md) from the
 * schema, so the document cannot drift from the code. A test fails when the
 * committed file differs; `npm run docs:config` rewrites it.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OPTIONS } from './options.ts';

/** Path of the generated document. */
export const REFERENCE_PATH = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

/** The whole Markdown document. */
export function renderReference(): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from router/config/schema.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    'Every option can be set in four ways. Precedence: command-line flag > environment variable > config file > default.',
    '',
    '- **Config file** (`--config FILE` or `SWITCHYARD_CONFIG`): YAML or JSON, nested by the dotted key, e.g.',
    '  `timeouts: { connectMs: 3000 }`. Unknown keys are rejected.',
    '- **Environment**: the variable in the table. Lists are comma-separated.',
    '- **Flags**: the flag in the table; list flags repeat (`--backend URL --backend URL`).',
    '',
    'Invalid configuration exits with status 2 and a message naming the field. Durations are milliseconds, sizes bytes.',
    '',
    '| key | flag | environment | default | description |',
    '|---|---|---|---|---|',
  ];
  for (const option of OPTIONS) {
    const defaultText = option.defaultValue === undefined ? '(unset)' : `\`${JSON.stringify(option.defaultValue)}\``;
    const choices = option.choices ? ` One of: ${option.choices.map((c) => `\`${c}\``).join(', ')}.` : '';
    const description = (option.description + choices).replace(/\|/g, '\\|');
    const flag = option.fileOnly ? 'file only' : `\`--${option.flag}\``;
    const env = option.fileOnly ? 'file only' : `\`${option.env}\``;
    lines.push(`| \`${option.path.join('.')}\` | ${flag} | ${env} | ${defaultText} | ${description} |`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(REFERENCE_PATH, renderReference());
}

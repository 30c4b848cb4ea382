/**
 * Renders the configuration reference (docs/configuration.md) from the
 * schema, so the document cannot drift from the code; sections the schema
 * cannot know (the registered scheduling plugins) are passed in. A test
 * fails when the committed file differs; `npm run docs:config`
 * (router/cli/config-reference.ts) rewrites it.
 */
import { fileURLToPath } from 'node:url';
import { OPTIONS } from './options.ts';
import { standardVariablesOf } from './standard-env.ts';

/** Path of the generated document. */
export const REFERENCE_PATH = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

/** The whole Markdown document: the option table, then `sections` (Markdown lines). */
export function renderReference(sections: readonly string[] = []): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from router/config/schema.ts by `npm run docs:config`; do not edit by hand. -->',
    '',
    'Every option can be set in four ways. Precedence: command-line flag > environment variable > config file > default.',
    '',
    '- **Config file** (`--config FILE` or `SWITCHYARD_CONFIG`): YAML or JSON, nested by the dotted key, e.g.',
    '  `timeouts: { connectMs: 3000 }`. Unknown keys are rejected at every level, with the nearest valid key',
    '  (`routing.polcy: unknown key; did you mean routing.policy?`).',
    '- **Environment**: the variable in the table. Lists are comma-separated. A `SWITCHYARD_*` variable that sets',
    '  nothing is warned about once at start-up, naming the nearest one; Kubernetes service-link variables',
    '  (`SWITCHYARD_PORT`, `SWITCHYARD_SERVICE_HOST`, ...) are ignored.',
    '- **Standard OpenTelemetry variables** (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_ENDPOINT`, ...) set the',
    '  `tracing.*` keys they are listed with, below the `SWITCHYARD_*` variable of the same key and above the',
    '  file; a signal-specific variable (`OTEL_EXPORTER_OTLP_TRACES_*`) wins over the general one.',
    '  `OTEL_TRACES_EXPORTER=otlp` turns tracing on, `none` or `OTEL_SDK_DISABLED=true` off. Exporter headers',
    '  are a secret: put them in `tracing.headersFile`; certificates and compression (`OTEL_EXPORTER_OTLP_CERTIFICATE`,',
    '  `OTEL_EXPORTER_OTLP_COMPRESSION`, ...) are read by the OTLP exporter itself, as in every SDK.',
    '- **Flags**: the flag in the table; list flags repeat (`--backend URL --backend URL`). An unknown flag is',
    '  refused with the closest flag.',
    '',
    'Invalid configuration exits with status 2 and one line naming each problem by its dotted path; the refused',
    'value is shown unless it is a secret (API keys, tokens, passwords are never printed). Durations are',
    'milliseconds, sizes bytes.',
    '',
    '`switchyard check-config [FILE] [options]` validates a configuration as `serve` would load it, checks the',
    'key files it names, and prints the effective value of every option with its source (flag, env, file,',
    'default), secrets redacted; it exits 0 or 2 and starts nothing (see docs/operations.md).',
    '',
    '| key | flag | environment | default | description |',
    '|---|---|---|---|---|',
  ];
  for (const option of OPTIONS) {
    const defaultText = option.defaultValue === undefined ? '(unset)' : `\`${JSON.stringify(option.defaultValue)}\``;
    const choices = option.choices ? ` One of: ${option.choices.map((c) => `\`${c}\``).join(', ')}.` : '';
    const description = (option.description + choices).replace(/\|/g, '\\|');
    const flag = option.fileOnly ? 'file only' : `\`--${option.flag}\``;
    const env = option.fileOnly ? 'file only' : [option.env, ...standardVariablesOf(option.path.join('.'))].map((name) => `\`${name}\``).join(', ');
    lines.push(`| \`${option.path.join('.')}\` | ${flag} | ${env} | ${defaultText} | ${description} |`);
  }
  if (sections.length > 0) lines.push('', ...sections);
  return `${lines.join('\n')}\n`;
}

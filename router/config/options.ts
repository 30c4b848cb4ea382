/**
 * Derives the flat option table (flag, env var, type, default, description)
 * from the configuration schema, so flags, env vars and `--help` can never
 * drift from the schema.
 */
import { z } from 'zod';
import { configSchema } from './schema.ts';

/** The value kinds a leaf option can have. */
export type OptionKind = 'string' | 'integer' | 'number' | 'boolean' | 'string-list' | 'map';

/** One leaf of the configuration schema. */
export interface OptionSpec {
  /** Path in the config object, e.g. `['timeouts', 'connectMs']`. */
  readonly path: readonly string[];
  /** Command-line flag without dashes, e.g. `timeouts-connect-ms`. */
  readonly flag: string;
  /** Environment variable, e.g. `SWITCHYARD_TIMEOUTS_CONNECT_MS`. */
  readonly env: string;
  readonly kind: OptionKind;
  readonly description: string;
  readonly defaultValue: unknown;
  readonly choices: readonly string[] | undefined;
  /** Only settable in the config file (maps have no flag or env form). */
  readonly fileOnly: boolean;
}

/** Flags that read better singular on the command line. */
const FLAG_ALIASES: Readonly<Record<string, string>> = { backends: 'backend' };

interface JsonSchemaNode {
  type?: string;
  properties?: Record<string, JsonSchemaNode>;
  items?: JsonSchemaNode;
  default?: unknown;
  description?: string;
  enum?: string[];
  additionalProperties?: JsonSchemaNode | boolean;
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function kindOf(node: JsonSchemaNode): OptionKind {
  if (node.type === 'object') return 'map';
  if (node.type === 'array') return 'string-list';
  if (node.type === 'integer' || node.type === 'number' || node.type === 'boolean') return node.type;
  return 'string';
}

function collect(node: JsonSchemaNode, path: string[], out: OptionSpec[]): void {
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const childPath = [...path, key];
    // A section (strict object: additionalProperties false) nests; a map (record) is one file-only option.
    if (child.type === 'object' && (child.additionalProperties === undefined || child.additionalProperties === false)) {
      collect(child, childPath, out);
      continue;
    }
    const flag = childPath.map((part) => FLAG_ALIASES[part] ?? kebab(part)).join('-');
    out.push({
      path: childPath,
      flag,
      env: `SWITCHYARD_${flag.replace(/-/g, '_').toUpperCase()}`,
      kind: kindOf(child),
      description: child.description ?? '',
      defaultValue: child.default,
      choices: child.enum,
      fileOnly: child.type === 'object',
    });
  }
}

const CONFIG_JSON_SCHEMA = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;

function buildOptions(): readonly OptionSpec[] {
  const out: OptionSpec[] = [];
  collect(CONFIG_JSON_SCHEMA, [], out);
  return Object.freeze(out);
}

/**
 * The keys the section at `path` accepts (through map entries and list
 * items), in schema order; empty when `path` leads to no section.
 */
export function keysAt(path: readonly PropertyKey[]): readonly string[] {
  let node: JsonSchemaNode | undefined = CONFIG_JSON_SCHEMA;
  for (const key of path) {
    if (node === undefined) return [];
    if (node.type === 'array') node = node.items;
    else if (typeof key === 'string' && node.properties !== undefined && Object.hasOwn(node.properties, key)) node = node.properties[key];
    else node = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
  }
  return Object.keys(node?.properties ?? {});
}

/** Every leaf option of the configuration schema, in schema order. */
export const OPTIONS: readonly OptionSpec[] = buildOptions();

/** Renders the option table as `--help` text. */
export function helpText(): string {
  const lines: string[] = [];
  for (const option of OPTIONS) {
    if (option.fileOnly) continue;
    const value = option.kind === 'boolean' ? '[true|false]' : option.kind === 'string-list' ? 'VALUE ...' : 'VALUE';
    const defaultText = option.defaultValue === undefined ? 'unset' : JSON.stringify(option.defaultValue);
    const choices = option.choices ? ` One of: ${option.choices.join(', ')}.` : '';
    lines.push(`  --${option.flag} ${value}`);
    lines.push(`      ${option.description}${choices} Default: ${defaultText}. Env: ${option.env}.`);
  }
  const fileOnly = OPTIONS.filter((option) => option.fileOnly).map((option) => `  ${option.path.join('.')}: ${option.description}`);
  if (fileOnly.length > 0) lines.push('', 'Config file only:', ...fileOnly);
  return lines.join('\n');
}

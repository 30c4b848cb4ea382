/**
 * The effective configuration as `switchyard check-config` prints it: one
 * line per option with its value and where the value came from (flag,
 * environment, file, default), secrets redacted. An operator reads it before
 * a rollout to see that a setting took, the way `nginx -T` is read.
 */
import type { ConfigLayers } from './load.ts';
import { OPTIONS, type OptionSpec } from './options.ts';
import type { Config } from './schema.ts';
import { redact, REDACTED, isSecretPath } from './secrets.ts';

/** Where an option's value came from. */
export type ValueSource = 'flag' | 'env' | 'file' | 'default';

function has(tree: unknown, path: readonly string[]): boolean {
  let node = tree;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

function valueAt(tree: unknown, path: readonly string[]): unknown {
  let node = tree;
  for (const key of path) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** The layer that set `option`, highest precedence first. */
export function sourceOf(option: OptionSpec, layers: ConfigLayers): ValueSource {
  if (has(layers.fromFlags, option.path)) return 'flag';
  if (has(layers.fromEnv, option.path) || has(layers.fromStandardEnv, option.path)) return 'env';
  if (has(layers.fromFile, option.path)) return 'file';
  return 'default';
}

function sourceText(option: OptionSpec, layers: ConfigLayers): string {
  const source = sourceOf(option, layers);
  switch (source) {
    case 'flag':
      return `flag --${option.flag}`;
    case 'env':
      return `env ${has(layers.fromEnv, option.path) ? option.env : (layers.standardSetBy.get(option.path.join('.')) ?? option.env)}`;
    case 'file':
      return `file ${layers.file ?? ''}`.trimEnd();
    case 'default':
      return 'default';
  }
}

function valueText(option: OptionSpec, value: unknown): string {
  if (value === undefined) return '(unset)';
  if (isSecretPath(option.path)) return REDACTED;
  return JSON.stringify(redact(value));
}

/**
 * One line per option, in schema order: `key = value  # source`. Secret
 * values (API keys, tokens, passwords, anywhere in a map) print as
 * {@link REDACTED}; files that hold secrets print their path.
 */
export function effectiveConfigLines(config: Config, layers: ConfigLayers): string[] {
  return OPTIONS.map((option) => `${option.path.join('.')} = ${valueText(option, valueAt(config, option.path))}  # ${sourceText(option, layers)}`);
}

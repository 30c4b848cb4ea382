/**
 * Loads configuration from its four layers (defaults < file < env < flags),
 * validates it once with the schema and freezes it. Callers pass the
 * environment and argv in; nothing here reads `process.env` itself.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { configSchema, type Config } from './schema.ts';
import { OPTIONS, type OptionSpec } from './options.ts';

/** A configuration problem; the message names the field. Exit non-zero on it. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Tree = Record<string, unknown>;

function setPath(tree: Tree, path: readonly string[], value: unknown): void {
  let node = tree;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) {
      node = next as Tree;
    } else {
      const created: Tree = {};
      node[key] = created;
      node = created;
    }
  }
  node[path[path.length - 1] as string] = value;
}

function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prior = out[key];
    const bothObjects =
      typeof value === 'object' && value !== null && !Array.isArray(value) &&
      typeof prior === 'object' && prior !== null && !Array.isArray(prior);
    out[key] = bothObjects ? merge(prior as Tree, value as Tree) : value;
  }
  return out;
}

function coerce(option: OptionSpec, raw: string, source: string): unknown {
  switch (option.kind) {
    case 'string':
      return raw;
    case 'string-list':
      return raw.split(',').map((part) => part.trim()).filter((part) => part !== '');
    case 'map':
      throw new ConfigError(`${source}: this option can only be set in the config file`);
    case 'boolean':
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      throw new ConfigError(`${source}: expected true or false, got ${JSON.stringify(raw)}`);
    case 'integer':
    case 'number': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value)) {
        throw new ConfigError(`${source}: expected a number, got ${JSON.stringify(raw)}`);
      }
      return value;
    }
  }
}

function fromEnv(env: Readonly<Record<string, string | undefined>>): Tree {
  const tree: Tree = {};
  for (const option of OPTIONS) {
    if (option.fileOnly) continue;
    const raw = env[option.env];
    if (raw !== undefined) setPath(tree, option.path, coerce(option, raw, option.env));
  }
  return tree;
}

const BY_FLAG = new Map(OPTIONS.filter((option) => !option.fileOnly).map((option) => [option.flag, option]));

/** Result of parsing command-line flags. */
interface ParsedFlags {
  readonly tree: Tree;
  readonly configFile: string | undefined;
  readonly help: boolean;
}

function fromFlags(argv: readonly string[]): ParsedFlags {
  const tree: Tree = {};
  const lists = new Map<OptionSpec, unknown[]>();
  let configFile: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    let value: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
    const option = BY_FLAG.get(name);
    if (name !== 'config' && option === undefined) throw new ConfigError(`unknown flag --${name} (see --help)`);
    if (value === undefined) {
      const next = argv[i + 1];
      if (option?.kind === 'boolean' && (next === undefined || next.startsWith('--'))) value = 'true';
      else if (next === undefined) throw new ConfigError(`--${name} needs a value`);
      else {
        value = next;
        i++;
      }
    }
    if (option === undefined) {
      configFile = value;
    } else if (option.kind === 'string-list') {
      const list = lists.get(option) ?? [];
      list.push(...(coerce(option, value, `--${name}`) as unknown[]));
      lists.set(option, list);
    } else {
      setPath(tree, option.path, coerce(option, value, `--${name}`));
    }
  }
  for (const [option, list] of lists) setPath(tree, option.path, list);
  return { tree, configFile, help };
}

function fromFile(file: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`config file ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text); // YAML is a superset of JSON, so one parser reads both.
  } catch (err) {
    throw new ConfigError(`config file ${file}: ${(err as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file}: must hold a mapping of options`);
  }
  return parsed as Tree;
}

/** Outcome of {@link loadConfig}: a config, or a request for help text. */
export type LoadResult = { readonly kind: 'config'; readonly config: Config } | { readonly kind: 'help' };

/**
 * Builds the configuration from flags, env and an optional file.
 * @throws ConfigError naming the offending field when any layer is invalid.
 */
export function loadConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): LoadResult {
  const flags = fromFlags(argv);
  if (flags.help) return { kind: 'help' };
  const file = flags.configFile ?? env['SWITCHYARD_CONFIG'];
  const layered = merge(merge(file === undefined ? {} : fromFile(file), fromEnv(env)), flags.tree);
  const result = configSchema.safeParse(layered);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const field = issue.path.join('.') || '(root)';
      return `${field}: ${issue.message}`;
    });
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return { kind: 'config', config: deepFreeze(result.data) };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

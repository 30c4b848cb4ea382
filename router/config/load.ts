/**
 * Loads configuration from its four layers (defaults < file < env < flags),
 * validates it once with the schema and freezes it. Callers pass the
 * environment and argv in; nothing here reads `process.env` itself.
 */
import { readFileSync } from 'node:fs';
import { parseDocument, type YAMLError } from 'yaml';
import type { z } from 'zod';
import { closest, editDistance } from './did-you-mean.ts';
import { environmentWarnings } from './environment.ts';
import { configSchema, type Config } from './schema.ts';
import { keysAt, OPTIONS, type OptionSpec } from './options.ts';
import { isSecretPath, withoutUrlCredentials } from './secrets.ts';
import { readStandardVariables } from './standard-env.ts';

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
    if (name !== 'config' && option === undefined) throw new ConfigError(unknownFlag(name));
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

/** Names every flag `serve` takes, for suggestions. */
const FLAG_NAMES = ['config', 'help', ...BY_FLAG.keys()];

function unknownFlag(name: string): string {
  const suggestion = closest(name, FLAG_NAMES);
  return `unknown flag --${name}${suggestion === undefined ? '' : `; did you mean --${suggestion}?`} (see --help)`;
}

function fromFile(file: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`config file ${file}: ${(err as Error).message}`);
  }
  const parsed = parseYamlSafely(file, text);
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${file}: must hold a mapping of options`);
  }
  return parsed as Tree;
}

/**
 * Readable descriptions of the YAML parser's error codes. The parser's own
 * messages quote the source (the offending line, a scalar, an escape), and a
 * config file holds secrets: only the code, its description and the
 * position are ever printed.
 */
const YAML_PROBLEMS: ReadonlyMap<string, string> = new Map([
  ['BAD_INDENT', 'bad indentation'],
  ['TAB_AS_INDENT', 'a tab used for indentation'],
  ['MISSING_CHAR', 'a closing quote, bracket, comma or space is missing'],
  ['BAD_DQ_ESCAPE', 'an invalid escape sequence in a double-quoted string'],
  ['BAD_SCALAR_START', 'a plain value starts with a reserved character (quote it)'],
  ['BLOCK_AS_IMPLICIT_KEY', 'a nested mapping where a value was expected (quote values that contain ": ")'],
  ['MULTILINE_IMPLICIT_KEY', 'a key spans several lines'],
  ['KEY_OVER_1024_CHARS', 'a key longer than 1024 characters'],
  ['DUPLICATE_KEY', 'a key appears twice in one mapping'],
  ['UNEXPECTED_TOKEN', 'an unexpected character'],
  ['BLOCK_IN_FLOW', 'a block collection inside a flow collection'],
  ['MULTIPLE_DOCS', 'more than one YAML document'],
  ['MULTIPLE_ANCHORS', 'a node with several anchors'],
  ['MULTIPLE_TAGS', 'a node with several tags'],
  ['ALIAS_PROPS', 'an alias with an anchor or tag'],
  ['BAD_ALIAS', 'an alias that refers to no anchor'],
  ['BAD_PROP_ORDER', 'anchors and tags in the wrong place'],
  ['BAD_DIRECTIVE', 'an invalid directive'],
  ['BAD_COLLECTION_TYPE', 'a tag that does not fit its collection'],
  ['TAG_RESOLVE_FAILED', 'an unknown tag'],
  ['NON_STRING_KEY', 'a key that is not a string'],
]);

/**
 * Parses YAML (a superset of JSON, so one parser reads both). Errors and
 * warnings alike fail, with the file, line, column and a description that
 * never quotes the file's content.
 */
function parseYamlSafely(file: string, text: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem !== undefined) throw new ConfigError(`config file ${file}${yamlPosition(problem)}: not valid YAML: ${yamlProblem(problem)}`);
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // Unresolved aliases and alias bombs surface here; their messages quote the alias.
    throw new ConfigError(`config file ${file}: not valid YAML: ${err instanceof ReferenceError ? 'an alias that refers to no anchor' : 'too many aliases or an unusable value'}`);
  }
}

function yamlPosition(problem: YAMLError): string {
  const at = problem.linePos?.[0];
  return at === undefined ? '' : `, line ${at.line}, column ${at.col}`;
}

function yamlProblem(problem: YAMLError): string {
  return `${YAML_PROBLEMS.get(problem.code) ?? 'a syntax error'} (${problem.code})`;
}

function valueAt(tree: unknown, path: readonly PropertyKey[]): unknown {
  let node = tree;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** Longest value quoted in an error (characters). */
const MAX_SHOWN = 80;

/**
 * The schema's message for one issue, with the value it refused when that
 * is no secret (`listen: must be HOST:PORT ... (got "8080")`). A secret's
 * value is never shown, nor quoted by the message (a refinement added later
 * might), and URL credentials never are.
 */
function issueMessage(issue: z.core.$ZodIssue, layered: Tree): string {
  const value = valueAt(layered, issue.path);
  if (isSecretPath(issue.path)) {
    if (typeof value !== 'string' || value === '') return issue.message;
    return issue.message.split(value).join('(value not shown)');
  }
  const shown = shownValue(value);
  return shown === undefined ? issue.message : `${issue.message} (got ${shown})`;
}

function shownValue(value: unknown): string | undefined {
  if (value === undefined || (typeof value === 'object' && value !== null)) return undefined;
  const text = withoutUrlCredentials(JSON.stringify(value));
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text;
}

/** One line per unknown key: its dotted path and the nearest key the section takes. */
function unknownKeys(issue: z.core.$ZodIssue & { code: 'unrecognized_keys' }): string[] {
  const section = issue.path.map(String);
  const valid = keysAt(issue.path);
  return issue.keys.map((key) => {
    const where = [...section, key].join('.');
    const suggestion = closest(key, valid);
    if (suggestion !== undefined) return `${where}: unknown key; did you mean ${[...section, suggestion].join('.')}?`;
    const elsewhere = inOtherSections(key);
    if (elsewhere.length > 0) return `${where}: unknown key; did you mean ${elsewhere.join(' or ')}?`;
    return `${where}: unknown key (${section.length === 0 ? 'top-level keys' : section.join('.')} takes ${valid.join(', ')})`;
  });
}

/**
 * Options in other sections whose own name is `key` or one edit from it
 * (`policy` at the top level: routing.policy), at most three.
 */
function inOtherSections(key: string): string[] {
  const scored = OPTIONS.map((option) => ({ path: option.path.join('.'), distance: editDistance(key, option.path[option.path.length - 1] as string) }));
  const best = Math.min(...scored.map((entry) => entry.distance));
  if (best > 1) return [];
  return scored.filter((entry) => entry.distance === best).slice(0, 3).map((entry) => entry.path);
}

function describeIssues(issues: readonly z.core.$ZodIssue[], layered: Tree): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return unknownKeys(issue);
    return [`${issue.path.join('.') || '(root)'}: ${issueMessage(issue, layered)}`];
  });
}

/** What each layer set, before validation (for `check-config`'s sources). */
export interface ConfigLayers {
  /** The config file's path, when one was named. */
  readonly file: string | undefined;
  readonly fromFile: Readonly<Tree>;
  readonly fromEnv: Readonly<Tree>;
  /** What the standard OpenTelemetry variables set (below `SWITCHYARD_*`, above the file). */
  readonly fromStandardEnv: Readonly<Tree>;
  /** The standard variable that set each dotted key. */
  readonly standardSetBy: ReadonlyMap<string, string>;
  readonly fromFlags: Readonly<Tree>;
}

/** One problem a {@link ConfigCheck} finds: the path from the config's root, and what is wrong there. */
export interface ConfigIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * A check of the parsed configuration against what config cannot import
 * (e.g. the scheduler's plugin registry, for `routing.profiles`), passed in
 * by the command that loads it. Returns the issues, empty when none.
 */
export type ConfigCheck = (config: Config) => readonly ConfigIssue[];

/**
 * Outcome of {@link loadConfig}: a config (with warnings to log once, e.g.
 * unknown `SWITCHYARD_*` variables), or a request for help text.
 */
export type LoadResult =
  | { readonly kind: 'config'; readonly config: Config; readonly warnings: readonly string[]; readonly layers: ConfigLayers }
  | { readonly kind: 'help' };

/**
 * Builds the configuration from flags, env and an optional file, then runs
 * `checks` on it.
 * @throws ConfigError naming the offending field when any layer is invalid or a check finds an issue.
 */
export function loadConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, checks: readonly ConfigCheck[] = []): LoadResult {
  const flags = fromFlags(argv);
  if (flags.help) return { kind: 'help' };
  const file = flags.configFile ?? env['SWITCHYARD_CONFIG'];
  const standard = readStandardVariables(env, (message) => new ConfigError(message));
  const fromStandardEnv: Tree = {};
  for (const [key, value] of standard.values) setPath(fromStandardEnv, key.split('.'), value);
  const layers: ConfigLayers = { file, fromFile: file === undefined ? {} : fromFile(file), fromEnv: fromEnv(env), fromStandardEnv, standardSetBy: standard.setBy, fromFlags: flags.tree };
  const layered = merge(merge(merge(layers.fromFile, layers.fromStandardEnv), layers.fromEnv), layers.fromFlags);
  const result = configSchema.safeParse(layered);
  if (!result.success) throw new ConfigError(`invalid configuration: ${describeIssues(result.error.issues, layered).join('; ')}`);
  const issues = checks.flatMap((check) => check(result.data));
  if (issues.length > 0) throw new ConfigError(`invalid configuration: ${issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  return { kind: 'config', config: deepFreeze(result.data), warnings: environmentWarnings(env), layers };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

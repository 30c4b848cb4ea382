/**
 * A scenario's command line: parsing it against the scenario's option list
 * (registry.ts), its `--help` text from the same list, and the one-line
 * answer to an option it does not take. Both ways into a scenario (`npm run
 * bench -- NAME` and running its file) end up here through results.ts
 * `scenarioOptions`, which throws {@link ScenarioUsage} for help and for bad
 * arguments; the entry points turn that into output and an exit code with
 * {@link exitCodeOf}.
 */
import { COMMON_OPTIONS, scenarioEntry, type OptionSpec, type ScenarioEntry, type ScenarioName } from './registry.ts';

/** Parsed values by option name: the value of an option that takes one, `true` for a flag. */
export type OptionValues = ReadonlyMap<string, string | true>;

/** What a command line asks for: help, values, or nothing valid (`error` says why, in one line). */
export type ParsedArgs = { readonly kind: 'help' } | { readonly kind: 'error'; readonly error: string } | { readonly kind: 'values'; readonly values: OptionValues };

const isHelp = (arg: string): boolean => arg === '--help' || arg === '-h';

/** `--name=value` as its two halves; anything else as itself with no inline value. */
function splitInline(arg: string): { flag: string; inline: string | undefined } {
  const at = arg.startsWith('--') ? arg.indexOf('=') : -1;
  return at < 0 ? { flag: arg, inline: undefined } : { flag: arg.slice(0, at), inline: arg.slice(at + 1) };
}

/**
 * Parses `argv` against `specs`, in order. An option's value is the next
 * argument unless that is missing or itself one of the options (then it
 * "needs a value"), so a value may start with a dash (`--router-args
 * "--admission-queue-length 1000"`); `--name=value` works too. The first
 * `--help` or `-h` in an option's place asks for help.
 */
export function parseArgv(specs: readonly OptionSpec[], argv: readonly string[]): ParsedArgs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const isOption = (arg: string) => isHelp(arg) || (arg.startsWith('--') && byName.has(splitInline(arg).flag.slice(2)));
  const values = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (isHelp(arg)) return { kind: 'help' };
    const { flag, inline } = splitInline(arg);
    const spec = flag.startsWith('--') ? byName.get(flag.slice(2)) : undefined;
    if (spec === undefined) return { kind: 'error', error: flag.startsWith('-') ? `unknown option ${flag}` : `unexpected argument ${JSON.stringify(arg)}` };
    if (spec.value === undefined) {
      if (inline !== undefined) return { kind: 'error', error: `option ${flag} takes no value` };
      values.set(spec.name, true);
      continue;
    }
    const next = argv[i + 1];
    const value = inline ?? (next === undefined || isOption(next) ? undefined : next);
    if (value === undefined) return { kind: 'error', error: `option ${flag} needs a value (${spec.value})` };
    if (inline === undefined) i++;
    values.set(spec.name, value);
  }
  return { kind: 'values', values };
}

/** Help and bad arguments, thrown by `scenarioOptions` before a scenario starts anything. */
export class ScenarioUsage extends Error {
  /** 0 for `--help` (the text goes to stdout), 2 for bad arguments (one line to stderr). */
  readonly exitCode: 0 | 2;
  /** What to print. */
  readonly text: string;

  constructor(exitCode: 0 | 2, text: string) {
    super(text);
    this.name = 'ScenarioUsage';
    this.exitCode = exitCode;
    this.text = text;
  }
}

/** Greedy word wrap to `width` columns, each line indented by `indent` spaces. */
function wrap(text: string, width: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => `${' '.repeat(indent)}${l}`).join('\n');
}

/** One help line: the option, its value placeholder, its description. */
function optionLine(spec: OptionSpec, note = ''): string {
  const left = `--${spec.name}${spec.value === undefined ? '' : ` ${spec.value}`}`;
  return `  ${left.padEnd(24)} ${spec.description}${note}`;
}

/** The `--help` text of `entry`: its title, what it does, the common options and its own. */
export function scenarioHelp(entry: ScenarioEntry): string {
  const own = entry.options.length === 0 ? ['  (none: the common options above are all it takes)'] : entry.options.map((spec) => optionLine(spec));
  return [
    `bench ${entry.name}: ${entry.title}`,
    '',
    wrap(entry.about, 100, 2),
    '',
    `Usage: npm run bench -- ${entry.name} [options]`,
    '',
    'Common options:',
    ...COMMON_OPTIONS.map((spec) => optionLine(spec, entry.ignores.includes(spec.name) ? ' (not used by this scenario)' : '')),
    `  ${'-h, --help'.padEnd(24)} this text`,
    '',
    `Options of ${entry.name}:`,
    ...own,
    '',
  ].join('\n');
}

/** The one line a bad argument gets: what was wrong and where the help is. */
export function usageError(name: string, error: string): string {
  return `bench ${name}: ${error} (see npm run bench -- ${name} --help)`;
}

/** Scenario `name`'s option values from `argv`; throws {@link ScenarioUsage} for `--help` and for bad arguments. */
export function parseScenarioArgs(name: ScenarioName, argv: readonly string[]): OptionValues {
  const entry = scenarioEntry(name);
  const parsed = parseArgv([...COMMON_OPTIONS, ...entry.options], argv);
  if (parsed.kind === 'help') throw new ScenarioUsage(0, scenarioHelp(entry));
  if (parsed.kind === 'error') throw new ScenarioUsage(2, usageError(name, parsed.error));
  return parsed.values;
}

/**
 * The exit code for what a scenario threw, after printing it: help to
 * stdout (0), a bad argument's one line to stderr (2), anything else with
 * its stack to stderr (1).
 */
export function exitCodeOf(err: unknown): number {
  if (!(err instanceof ScenarioUsage)) {
    console.error(err);
    return 1;
  }
  if (err.exitCode === 0) console.log(err.text);
  else console.error(err.text);
  return err.exitCode;
}

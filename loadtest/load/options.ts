/**
 * The options of `switchyard bench load`, parsed from argv into plain data.
 * One table holds every flag with its argument, its help line and its
 * parser, so the help always lists every option and nothing else; a usage
 * problem is a {@link UsageError}, one line for the command to print before
 * it exits 2.
 */
import { closest } from '../../router/config/did-you-mean.ts';
import type { TokenRange } from '../bench/load-spec.ts';

/** A mistake in the command line: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** How one step loads the target. */
export type StepLoad = { readonly kind: 'rate'; readonly perS: number } | { readonly kind: 'concurrency'; readonly clients: number };

/** Everything `switchyard bench load` was asked to do. */
export interface LoadOptions {
  /** The target's base URL as given (no credentials, http or https). */
  readonly target: URL;
  readonly model: string;
  /** One step per entry, run in order. */
  readonly steps: readonly StepLoad[];
  readonly durationS: number;
  readonly warmupS: number;
  readonly stream: boolean;
  readonly promptTokens: TokenRange;
  readonly outputTokens: TokenRange;
  readonly ignoreEos: boolean;
  /** Session keys sent as `x-session-id` (0: none). */
  readonly sessions: number;
  /** Turns per conversation (1: single requests). */
  readonly turns: number;
  readonly apiKeyFile: string | undefined;
  /** Where the report goes; undefined: stdout only. */
  readonly out: string | undefined;
  readonly processes: number;
  /** Open loop: connections to the target per generator process. */
  readonly maxConnections: number;
  /** No progress line. */
  readonly quiet: boolean;
}

/** What parsing argv gave: options, or a request for the help text. */
export type ParsedLoad = { readonly kind: 'help' } | { readonly kind: 'options'; readonly options: LoadOptions };

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Draft = Mutable<Omit<LoadOptions, 'target' | 'model' | 'steps'>> & { target?: URL; model?: string; rates?: number[]; concurrency?: number[] };

/** One flag: its argument placeholder (undefined: a switch that takes an optional true|false), help line and parser. */
interface Flag {
  readonly name: string;
  readonly arg: string;
  readonly help: string;
  /** True when the flag may stand alone (`--ignore-eos` means `--ignore-eos true`). */
  readonly bare?: boolean;
  readonly set: (draft: Draft, value: string) => void;
}

function number(flag: string, value: string, { min, integer }: { min: number; integer: boolean }): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${flag}: expected ${integer ? 'an integer' : 'a number'} ≥ ${min}, got ${JSON.stringify(value)}`);
  }
  return n;
}

function list(flag: string, value: string, options: { min: number; integer: boolean }): number[] {
  return value.split(',').map((part) => number(flag, part.trim(), options));
}

/** Sets the load shape once: two shapes (or --rate with --rates) are a mistake, not a last-one-wins. */
function shape(draft: Draft, flag: string, set: () => void): void {
  if (draft.rates !== undefined || draft.concurrency !== undefined) throw new UsageError(`--${flag}: give exactly one load shape: --rate R, --rates R1,R2,... or --concurrency C`);
  set();
}

function boolean(flag: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${flag}: expected true or false, got ${JSON.stringify(value)}`);
}

/** `N` or `MIN-MAX` tokens. */
function tokenRange(flag: string, value: string): TokenRange {
  const [low, high, ...rest] = value.split('-');
  if (rest.length > 0 || low === undefined) throw new UsageError(`--${flag}: expected N or MIN-MAX, got ${JSON.stringify(value)}`);
  const min = number(flag, low, { min: 1, integer: true });
  const max = high === undefined ? min : number(flag, high, { min: 1, integer: true });
  if (max < min) throw new UsageError(`--${flag}: ${min}-${max} is an empty range`);
  return { min, max };
}

/** The base URL: http or https, no credentials (a key goes in --api-key-file, never in a URL that reports and logs show). */
function targetUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--target: ${JSON.stringify(value)} is not a URL; give the base URL of a switchyard router or an OpenAI-compatible engine, e.g. http://127.0.0.1:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--target: only http:// and https:// URLs are supported, got ${url.protocol}//`);
  if (url.username !== '' || url.password !== '') throw new UsageError('--target: the URL carries credentials; put an API key in a file and pass --api-key-file');
  if (url.search !== '' || url.hash !== '') throw new UsageError('--target: give a base URL without a query or fragment');
  return url;
}

const FLAGS: readonly Flag[] = [
  { name: 'target', arg: 'URL', help: 'base URL of a switchyard router or an OpenAI-compatible engine (required), e.g. http://127.0.0.1:8080 or .../v1', set: (d, v) => void (d.target = targetUrl(v)) },
  { name: 'model', arg: 'M', help: 'model name sent in every request (required)', set: (d, v) => void (d.model = v) },
  { name: 'rate', arg: 'R', help: 'open loop: Poisson arrivals, R requests per second (one of --rate, --rates, --concurrency)', set: (d, v) => shape(d, 'rate', () => void (d.rates = [number('rate', v, { min: 0.001, integer: false })])) },
  { name: 'rates', arg: 'R1,R2,...', help: 'open loop, one step per rate, reported side by side', set: (d, v) => shape(d, 'rates', () => void (d.rates = list('rates', v, { min: 0.001, integer: false }))) },
  { name: 'concurrency', arg: 'C[,C2,...]', help: 'closed loop: C clients, each sending its next request when the last is answered (a list sweeps)', set: (d, v) => shape(d, 'concurrency', () => void (d.concurrency = list('concurrency', v, { min: 1, integer: true }))) },
  { name: 'duration', arg: 'S', help: 'measured seconds per step (default 30)', set: (d, v) => void (d.durationS = number('duration', v, { min: 0.1, integer: false })) },
  { name: 'warmup', arg: 'S', help: 'seconds sent before each step is measured, left out of its numbers (default 5)', set: (d, v) => void (d.warmupS = number('warmup', v, { min: 0, integer: false })) },
  { name: 'stream', arg: 'true|false', help: 'streamed answers (default true); TTFT and inter-token latency need streaming', set: (d, v) => void (d.stream = boolean('stream', v)) },
  { name: 'prompt-tokens', arg: 'N|MIN-MAX', help: 'new prompt tokens per request, fixed or uniform in a range (default 512; approximate: ~4 characters a token, no tokenizer)', set: (d, v) => void (d.promptTokens = tokenRange('prompt-tokens', v)) },
  { name: 'output-tokens', arg: 'N|MIN-MAX', help: 'max_tokens per request, fixed or uniform in a range (default 128)', set: (d, v) => void (d.outputTokens = tokenRange('output-tokens', v)) },
  { name: 'ignore-eos', arg: 'true|false', bare: true, help: "send vLLM's ignore_eos so answers run to max_tokens (default true; false for engines that refuse it)", set: (d, v) => void (d.ignoreEos = boolean('ignore-eos', v)) },
  { name: 'sessions', arg: 'N', help: 'spread requests over N session keys, sent as x-session-id (default none)', set: (d, v) => void (d.sessions = number('sessions', v, { min: 1, integer: true })) },
  { name: 'turns', arg: 'K', help: 'conversations of K turns: each session resends its history, answers included (needs --sessions)', set: (d, v) => void (d.turns = number('turns', v, { min: 1, integer: true })) },
  { name: 'api-key-file', arg: 'FILE', help: 'send the key in FILE as a Bearer token; the key is never printed or written', set: (d, v) => void (d.apiKeyFile = v) },
  { name: 'out', arg: 'DIR', help: 'write the report there: report.md, report.json and SVG charts', set: (d, v) => void (d.out = v) },
  { name: 'processes', arg: 'N', help: 'generator processes sharing the load (default 1); raise it when the report says the generator did not keep up', set: (d, v) => void (d.processes = number('processes', v, { min: 1, integer: true })) },
  { name: 'max-connections', arg: 'N', help: 'open loop: connections per generator process (default 1000); arrivals beyond them wait, and the wait counts', set: (d, v) => void (d.maxConnections = number('max-connections', v, { min: 1, integer: true })) },
  { name: 'quiet', arg: '', bare: true, help: 'no progress line on stderr', set: (d, v) => void (d.quiet = boolean('quiet', v)) },
];

/** The help text of `switchyard bench load`. */
export function loadUsage(): string {
  const width = Math.max(...FLAGS.map((f) => `--${f.name} ${f.arg}`.length));
  const lines = FLAGS.map((f) => `  ${`--${f.name} ${f.arg}`.padEnd(width)}  ${f.help}`);
  return `Usage: switchyard bench load --target URL --model M (--rate R | --rates R1,R2,... | --concurrency C) [options]

Sends chat completions to a deployment and reports what it measured: requests served, errors by
kind, time to first token, inter-token latency, end-to-end latency and throughput per step, and
whether this load generator kept up with its own schedule. Every answer is checked as a strict
OpenAI client would read it. Token counts are approximate (no tokenizer: ~4 characters a token);
answers are counted from the usage the target reports, else one token per streamed chunk.

${lines.join('\n')}
  --help ${' '.repeat(Math.max(0, width - 6))} this text

Exit: 0 when the run finished (its errors are in the report), 1 when no request succeeded,
2 on a usage error or a target that cannot answer one request before the load starts.
`;
}

const DEFAULTS: Draft = {
  durationS: 30,
  warmupS: 5,
  stream: true,
  promptTokens: { min: 512, max: 512 },
  outputTokens: { min: 128, max: 128 },
  ignoreEos: true,
  sessions: 0,
  turns: 1,
  apiKeyFile: undefined,
  out: undefined,
  processes: 1,
  maxConnections: 1000,
  quiet: false,
};

/**
 * The chat completions path under the target's base URL: `/v1/chat/completions`
 * after whatever path it has, which may already end in `/v1` (the base URL
 * OpenAI clients are given).
 */
export function chatPath(target: URL): string {
  const base = target.pathname.replace(/\/+$/, '');
  return `${base.endsWith('/v1') ? base : `${base}/v1`}/chat/completions`;
}

/** The step's name in progress lines, tables and charts. */
export function stepLabel(load: StepLoad): string {
  return load.kind === 'rate' ? `${load.perS} req/s` : `${load.clients} client${load.clients === 1 ? '' : 's'}`;
}

/** Parses `switchyard bench load` arguments; throws {@link UsageError}. */
export function parseLoadOptions(argv: readonly string[]): ParsedLoad {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  const draft: Draft = { ...DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [name, inline] = arg.startsWith('--') ? (arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]) : [undefined, undefined];
    const flag = FLAGS.find((f) => f.name === name);
    if (flag === undefined) {
      const suggestion = name === undefined ? undefined : closest(name, FLAGS.map((f) => f.name));
      throw new UsageError(`unknown option ${JSON.stringify(arg)}${suggestion === undefined ? '' : `; did you mean --${suggestion}?`} (see switchyard bench load --help)`);
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (flag.bare === true && (next === undefined || next.startsWith('--') || flag.arg === '')) value = 'true';
      else if (next === undefined) throw new UsageError(`--${flag.name} needs a value (${flag.arg})`);
      else {
        value = next;
        i++;
      }
    }
    flag.set(draft, value);
  }
  return { kind: 'options', options: finish(draft) };
}

/** The checks across flags. */
function finish(draft: Draft): LoadOptions {
  const { target, model, rates, concurrency, ...rest } = draft;
  if (target === undefined) throw new UsageError('--target URL is required (see switchyard bench load --help)');
  if (model === undefined || model === '') throw new UsageError('--model M is required (see switchyard bench load --help)');
  if ((rates === undefined) === (concurrency === undefined)) throw new UsageError('give exactly one load shape: --rate R, --rates R1,R2,... or --concurrency C');
  if (rest.turns > 1 && rest.sessions === 0) throw new UsageError('--turns needs --sessions: a conversation belongs to a session');
  if (rest.sessions > 0 && rest.sessions < rest.processes) throw new UsageError('--sessions must be at least --processes: each generator process keeps its own share of the sessions');
  const steps: StepLoad[] = rates !== undefined ? rates.map((perS) => ({ kind: 'rate', perS })) : (concurrency ?? []).map((clients) => ({ kind: 'concurrency', clients }));
  return { ...rest, target, model, steps };
}

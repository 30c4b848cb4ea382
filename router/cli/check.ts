/**
 * `switchyard check URL...`: the router image's own smoke test. The image has
 * no shell and no curl, so the Helm chart's `helm test` hook Pod runs this
 * against `/readyz` and `/v1/models` through the Service. Each URL gets one
 * GET and one output line; the exit code is 0 only when every URL answered
 * 2xx (and, with `--require-models`, every `/v1/models` listed a model).
 */
import { Agent } from 'undici';
import { upstreamGet } from '../../discovery/upstream-body.ts';

const USAGE = `Usage: switchyard check [--timeout-ms MS] [--require-models] URL...

GETs each URL once and prints one line per URL. Exits 0 only when every URL
answers 2xx, 1 otherwise, 2 on a usage error.

  --timeout-ms MS      budget for each GET, headers and body (default 5000)
  --require-models     a URL whose path ends in /v1/models must also list at
                       least one model in its "data" array
`;

/** Largest `/v1/models` body read (bytes); other bodies are discarded unread. */
const MAX_MODELS_BYTES = 4 * 1024 * 1024;

/** What one URL is checked for. */
export interface CheckOptions {
  /** Budget for the whole GET (ms, > 0). */
  readonly timeoutMs: number;
  /** A `/v1/models` answer must list at least one model. */
  readonly requireModels: boolean;
}

/** The outcome for one URL: `line` is what is printed for it. */
export interface CheckOutcome {
  readonly ok: boolean;
  readonly line: string;
}

/**
 * GETs `url` through `dispatcher` (owned by the caller) and judges the
 * answer. Never rejects: a transport failure or timeout is a failed outcome.
 */
export async function checkUrl(dispatcher: Agent, url: URL, options: CheckOptions): Promise<CheckOutcome> {
  const started = performance.now();
  const took = () => `${Math.round(performance.now() - started)} ms`;
  const wantsModels = options.requireModels && url.pathname.replace(/\/+$/, '').endsWith('/v1/models');
  try {
    const get = { url, signal: AbortSignal.timeout(options.timeoutMs), headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs };
    const outcome = await upstreamGet(dispatcher, get, async (answer) => {
      const status = answer.statusCode;
      if (status < 200 || status > 299) return { ok: false, detail: `${status}` };
      if (!wantsModels) return { ok: true, detail: `${status}` };
      const count = modelCount(await answer.text(MAX_MODELS_BYTES));
      return count > 0 ? { ok: true, detail: `${status} ${count} model${count === 1 ? '' : 's'}` } : { ok: false, detail: `${status} lists no model` };
    });
    return { ok: outcome.ok, line: `${outcome.ok ? 'ok  ' : 'FAIL'} ${url.href} ${outcome.detail} (${took()})` };
  } catch (err) {
    return { ok: false, line: `FAIL ${url.href} ${(err as Error).message} (${took()})` };
  }
}

/** Models listed in an OpenAI `/v1/models` body; 0 when it is not one. */
function modelCount(text: string): number {
  try {
    const data = (JSON.parse(text) as { data?: unknown }).data;
    return Array.isArray(data) ? data.filter((m) => typeof (m as { id?: unknown } | null)?.id === 'string').length : 0;
  } catch {
    return 0;
  }
}

/**
 * `switchyard check`: checks the URLs in order, prints a line for each with
 * `print` (usage errors with `printError`), and returns the exit code (0 all
 * passed, 1 any failed, 2 usage).
 */
export async function check(argv: readonly string[], print: (line: string) => void = console.log, printError: (line: string) => void = console.error): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    print(USAGE);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (err) {
    printError(`switchyard check: ${(err as Error).message}`);
    return 2;
  }
  const dispatcher = new Agent({ connections: 1 });
  let failed = 0;
  try {
    for (const url of parsed.urls) {
      const outcome = await checkUrl(dispatcher, url, parsed.options);
      print(outcome.line);
      if (!outcome.ok) failed++;
    }
  } finally {
    await dispatcher.close();
  }
  return failed === 0 ? 0 : 1;
}

function parseArgs(argv: readonly string[]): { urls: URL[]; options: CheckOptions } {
  const urls: URL[] = [];
  let timeoutMs = 5_000;
  let requireModels = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--require-models') requireModels = true;
    else if (arg === '--timeout-ms' || arg.startsWith('--timeout-ms=')) {
      const raw = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      timeoutMs = Number(raw);
      if (raw === undefined || !Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new Error('--timeout-ms needs a whole number of milliseconds > 0');
    } else if (arg.startsWith('--')) throw new Error(`unknown flag ${arg} (see --help)`);
    else if (!URL.canParse(arg) || !/^https?:$/.test(new URL(arg).protocol)) throw new Error(`not an http(s) URL: ${JSON.stringify(arg)}`);
    else urls.push(new URL(arg));
  }
  if (urls.length === 0) throw new Error('no URL given (see --help)');
  return { urls, options: { timeoutMs, requireModels } };
}

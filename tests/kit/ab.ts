/**
 * ApacheBench (`ab`, Debian's apache2-utils) as a load generator: one
 * single-threaded C process, so the client side of a CPU-per-request
 * measurement costs little and the same for every system. Pinned to a core
 * with `taskset` when given, under the hard open-file limit.
 */
import { spawn, spawnSync } from 'node:child_process';

/** One ab run. */
export interface AbRun {
  readonly url: string;
  /** A file holding the POST body; sent as `application/json`. */
  readonly bodyFile: string;
  readonly requests: number;
  /** Stop after this many seconds even before `requests` (ab's `-t`); undefined: run all of them. */
  readonly seconds?: number;
  readonly concurrency: number;
  /** `-k`: HTTP keep-alive; otherwise a new connection per request. */
  readonly keepAlive: boolean;
  readonly core?: number;
}

/** What ab reported. */
export interface AbResult {
  readonly complete: number;
  /** Connect, receive, length and exception failures (length excluded by `-l`). */
  readonly failed: number;
  readonly non2xx: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** ab's version (`2.3`), or undefined when it is not installed. */
export function abVersion(): string | undefined {
  const probe = spawnSync('ab', ['-V'], { encoding: 'utf8' });
  if (probe.error !== undefined) return undefined;
  return /Version (\S+)/.exec(probe.stdout)?.[1];
}

function field(output: string, pattern: RegExp): number {
  const match = pattern.exec(output);
  if (match === null) throw new Error(`ab output lacks ${String(pattern)}:\n${output}`);
  return Number(match[1]);
}

/** Parses ab's summary. @throws Error when a line it always prints is missing. */
export function parseAbOutput(output: string): AbResult {
  return {
    complete: field(output, /^Complete requests:\s+(\d+)/m),
    failed: field(output, /^Failed requests:\s+(\d+)/m),
    // ab prints this line only when some answer was not 2xx.
    non2xx: /^Non-2xx responses:/m.test(output) ? field(output, /^Non-2xx responses:\s+(\d+)/m) : 0,
    requestsPerSecond: field(output, /^Requests per second:\s+([\d.]+)/m),
    p50Ms: field(output, /^\s+50%\s+(\d+)/m),
    p99Ms: field(output, /^\s+99%\s+(\d+)/m),
  };
}

/** Runs ab to the end and parses its summary. @throws Error when ab exits non-zero. */
export async function runAb(run: AbRun): Promise<AbResult> {
  // -l: answers differ in length (ids); -r: a receive error counts as a failed request instead of stopping ab.
  // -t comes first: it resets -n to 50,000, which the -n after it overrides.
  const args = [...(run.seconds === undefined ? [] : ['-t', String(run.seconds)]), '-n', String(run.requests), '-c', String(run.concurrency), '-l', '-r', '-s', '30', ...(run.keepAlive ? ['-k'] : []), '-p', run.bodyFile, '-T', 'application/json', run.url];
  const ab = run.core === undefined ? ['ab', ...args] : ['taskset', '-c', String(run.core), 'ab', ...args];
  const script = 'ulimit -n "$(ulimit -Hn)"; exec "$@"';
  const child = spawn('bash', ['-c', script, 'bash', ...ab], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`ab exited with ${String(code)}:\n${output.slice(-2000)}`);
  return parseAbOutput(output);
}

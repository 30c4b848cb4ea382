/**
 * The one place tests and benchmarks start a switchyard process (`serve`,
 * `sim`) or another Node program of the kit: the real CLI as a child
 * (process.execPath, so Node 24), ready once a log line on stdout or stderr
 * carries its marker ("switchyard listening" by default), whose numeric fields
 * are the ports. Every child is killed when the test process exits, whatever
 * happens. {@link startRouter} and `startRouterProcess` (harness.ts) are the
 * two shapes the suites use, both built on {@link spawnSwitchyard}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { atNormalPriority } from './processes.ts';

const BIN = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));
const LIVE = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of LIVE) child.kill('SIGKILL');
});
/** Log lines kept per process: enough for any assertion, bounded for a long benchmark. */
const KEPT_LOG_LINES = 5_000;
/** Characters of output kept from before the ready line, for the error when a start fails. */
const MAX_START_OUTPUT = 64 * 1024;

/**
 * A shell command that sets the open-file limit to `limit`, or to the hard
 * limit where raising it that far is not permitted.
 */
export function openFilesAtMost(limit: number): string {
  return `ulimit -n ${limit} 2>/dev/null || ulimit -n "$(ulimit -Hn)"`;
}

/** How to start the process. */
export interface SpawnOptions {
  /** The Node program to run; the switchyard CLI by default. */
  readonly script?: string | undefined;
  /** Arguments for Node itself, before the script (e.g. `--max-old-space-size=384`, `--import`). */
  readonly nodeArgs?: readonly string[] | undefined;
  /** A program that sets the process up and execs the rest (e.g. joins a memory cgroup), so the pid stays the router's. */
  readonly launcher?: readonly string[];
  /** Pins the process to this CPU core with `taskset`. */
  readonly core?: number | undefined;
  /** The child's open-file limit (`ulimit -n`), set before it starts (the hard limit where that is lower and cannot be raised). */
  readonly openFiles?: number | undefined;
  /** The child's whole environment; this process's by default. */
  readonly env?: NodeJS.ProcessEnv;
  /** The text of the log line that says the process is ready; "switchyard listening" by default. */
  readonly marker?: string;
  readonly timeoutMs?: number;
}

/** A started process. */
export interface SwitchyardProcess {
  readonly child: ChildProcess;
  /** The numeric fields of the ready line (for the router: `traffic` and `admin`). */
  readonly ports: Record<string, number>;
  /** Its log lines so far, parsed as JSON where they are (bounded). */
  readonly logs: Record<string, unknown>[];
  /** Resolves with the exit code. */
  readonly exit: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  readonly stop: (graceMs?: number) => Promise<number | null>;
}

/**
 * Starts `node [nodeArgs] SCRIPT ARGS` (the switchyard CLI by default) and
 * resolves once it logs its ready line; rejects, with its last output, if it
 * exits or times out first. The child runs at normal CPU priority even when
 * the caller lowered its own (a benchmark's load generator does).
 */
export function spawnSwitchyard(args: readonly string[], options: SpawnOptions = {}): Promise<SwitchyardProcess> {
  const { script = BIN, nodeArgs = [], launcher = [], core, openFiles, env, marker = 'switchyard listening', timeoutMs = 60_000 } = options;
  const node = core === undefined ? [process.execPath] : ['taskset', '-c', String(core), process.execPath];
  let command = [...launcher, ...node, ...nodeArgs, script, ...args];
  if (openFiles !== undefined) command = ['/bin/sh', '-c', `${openFilesAtMost(openFiles)}; exec "$@"`, 'sh', ...command];
  const child = spawn(command[0] as string, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  LIVE.add(child);
  atNormalPriority(child.pid);
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      LIVE.delete(child);
      resolve(code);
    }),
  );
  const logs: Record<string, unknown>[] = [];
  const stop = async (graceMs = 10_000): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const code = await exit;
    clearTimeout(timer);
    return code;
  };
  return new Promise((resolve, reject) => {
    let ready = false;
    let output = ''; // raw, until ready: what a failed start said, for the error
    const name = args[0] === 'serve' ? 'router' : (args[0] ?? script);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not log "${marker}" in ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    void exit.then((code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${name} exited early with ${String(code)}: ${output}`));
    });
    const onLine = (line: string) => {
      if (line === '') return;
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        entry = { msg: line };
      }
      if (logs.length < KEPT_LOG_LINES) logs.push(entry);
      if (ready || !line.includes(marker)) return;
      ready = true;
      clearTimeout(timer);
      const ports: Record<string, number> = {};
      for (const [key, value] of Object.entries(entry)) if (typeof value === 'number') ports[key] = value;
      resolve({ child, ports, logs, exit, stop });
    };
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream?.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        if (!ready && output.length < MAX_START_OUTPUT) output += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) onLine(line);
      });
    }
  });
}

/** A router started by {@link startRouter}. */
export interface RouterProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT` of the traffic port. */
  readonly traffic: string;
  /** `http://127.0.0.1:PORT` of the admin port. */
  readonly admin: string;
  /** Parsed JSON log lines so far (bounded). */
  readonly logs: Record<string, unknown>[];
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  readonly stop: (graceMs?: number) => Promise<number | null>;
}

/**
 * Starts `switchyard serve ARGS` on free loopback ports with no pre-stop
 * delay, with `env` added to a minimal environment (so no SWITCHYARD_*
 * variable of the caller's leaks in).
 */
export async function startRouter(args: readonly string[], env: Readonly<Record<string, string>> = {}, timeoutMs = 15_000): Promise<RouterProcess> {
  const started = await spawnSwitchyard(['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', ...args], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    timeoutMs,
  });
  return {
    child: started.child,
    traffic: `http://127.0.0.1:${started.ports['traffic']}`,
    admin: `http://127.0.0.1:${started.ports['admin']}`,
    logs: started.logs,
    stop: started.stop,
  };
}

/** GET `url` and parse JSON (any status). */
export async function getJson<T = unknown>(url: string): Promise<{ status: number; body: T }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as T };
}

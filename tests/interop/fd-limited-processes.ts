/**
 * Child processes for load from real clients: the router (`switchyard
 * serve`), engine simulators (`switchyard sim`) and tools such as ab, each
 * started through `bash -c 'ulimit -n …; exec …'` so thousands of concurrent
 * connections do not hit a default limit of 1024 open files. A process
 * without permission to raise its hard limit gets its hard limit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Open files a child may hold. */
export const FD_LIMIT = 65_536;

const BIN = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));

/** `command` with `args`, run under the raised open-file limit; stdio as given. */
export function spawnWithFdLimit(command: string, args: readonly string[], stdio: ['ignore' | 'pipe', 'ignore' | 'pipe', 'ignore' | 'pipe']): ChildProcess {
  const script = `ulimit -n ${FD_LIMIT} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"`;
  return spawn('bash', ['-c', script, 'bash', command, ...args], { stdio });
}

/** A switchyard child process (router or simulator) and the ports it announced. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  /** The traffic port (router) or the listening port (simulator). */
  readonly port: number;
  /** The admin port (router only; 0 for a simulator). */
  readonly admin: number;
  /** Sends SIGTERM and resolves once the process exited. */
  stop(): Promise<void>;
}

/**
 * Starts `switchyard serve` (the router reports its ports on stderr) or
 * `switchyard sim` (on stdout) and resolves once it listens.
 */
export function startService(kind: 'serve' | 'sim', args: readonly string[]): Promise<ServiceProcess> {
  const child = spawnWithFdLimit(process.execPath, [BIN, kind, ...args], ['ignore', kind === 'sim' ? 'pipe' : 'ignore', 'pipe']);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const announce = kind === 'sim' ? child.stdout : child.stderr;
  // The last output, for the error when the process fails to start; bounded, since the pipes stay read for life.
  let tail = '';
  const keep = (text: string) => (tail = (tail + text).slice(-4_096));
  child.stderr?.setEncoding('utf8');
  if (kind === 'sim') child.stderr?.on('data', keep);
  return new Promise((resolve, reject) => {
    let partial = '';
    announce?.setEncoding('utf8');
    announce?.on('data', (text: string) => {
      keep(text);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (kind === 'serve' && line.includes('switchyard listening')) {
          const { traffic, admin } = JSON.parse(line) as { traffic: number; admin: number };
          resolve({ child, port: traffic, admin, stop });
        }
        if (kind === 'sim' && line.includes('engine simulator listening')) resolve({ child, port: (JSON.parse(line) as { port: number }).port, admin: 0, stop });
      }
    });
    child.once('exit', (code) => reject(new Error(`switchyard ${kind} exited early with ${String(code)}: ${tail}`)));
  });
}

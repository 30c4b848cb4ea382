/**
 * Child processes for load from real clients: the router (`switchyard
 * serve`), engine simulators (`switchyard sim`) and tools such as ab, each
 * started through `sh -c 'ulimit -n …; exec …'` so thousands of concurrent
 * connections do not hit a default limit of 1024 open files. A process
 * without permission to raise its hard limit gets its hard limit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openFilesAtMost, spawnSwitchyard } from '../kit/router-process.ts';

/** Open files a child may hold. */
export const FD_LIMIT = 65_536;

/** `command` with `args` (a tool such as ab), run under the raised open-file limit; stdio as given. */
export function spawnWithFdLimit(command: string, args: readonly string[], stdio: ['ignore' | 'pipe', 'ignore' | 'pipe', 'ignore' | 'pipe']): ChildProcess {
  return spawn('/bin/sh', ['-c', `${openFilesAtMost(FD_LIMIT)}; exec "$@"`, 'sh', command, ...args], { stdio });
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

/** Starts `switchyard serve` or `switchyard sim` under the raised open-file limit and resolves once it listens. */
export async function startService(kind: 'serve' | 'sim', args: readonly string[]): Promise<ServiceProcess> {
  const started = await spawnSwitchyard([kind, ...args], { openFiles: FD_LIMIT, marker: kind === 'sim' ? 'engine simulator listening' : 'switchyard listening' });
  return {
    child: started.child,
    port: (kind === 'sim' ? started.ports['port'] : started.ports['traffic']) as number,
    admin: kind === 'sim' ? 0 : (started.ports['admin'] as number),
    stop: async () => void (await started.stop()),
  };
}

/**
 * Runs the real `switchyard serve` as a child process (process.execPath, so
 * Node 24) and finds its ports from its "switchyard listening" log line.
 * Every child is also killed when the test process exits, whatever happens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));
const LIVE = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of LIVE) child.kill('SIGKILL');
});

/** A running router process. */
export interface RouterProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT` of the traffic port. */
  readonly traffic: string;
  /** `http://127.0.0.1:PORT` of the admin port. */
  readonly admin: string;
  /** Parsed JSON log lines so far (bounded). */
  readonly logs: Record<string, unknown>[];
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/** Starts `switchyard serve ARGS` with `env` added to a minimal environment. */
export async function startRouter(args: readonly string[], env: Readonly<Record<string, string>> = {}, timeoutMs = 15_000): Promise<RouterProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', ...args], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  LIVE.add(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    LIVE.delete(child);
    resolve(code);
  }));
  const logs: Record<string, unknown>[] = [];
  let buffered = '';
  const ports = new Promise<{ traffic: number; admin: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`router did not start in ${timeoutMs} ms; logs: ${JSON.stringify(logs.slice(-5))}`)), timeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`router exited with ${code} before listening; logs: ${JSON.stringify(logs.slice(-5))} ${buffered}`));
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          entry = { msg: line };
        }
        if (logs.length < 5_000) logs.push(entry);
        if (entry['msg'] === 'switchyard listening') {
          clearTimeout(timer);
          resolve({ traffic: entry['traffic'] as number, admin: entry['admin'] as number });
        }
      }
    });
  });
  try {
    const { traffic, admin } = await ports;
    return {
      child,
      traffic: `http://127.0.0.1:${traffic}`,
      admin: `http://127.0.0.1:${admin}`,
      logs,
      async stop(graceMs = 10_000) {
        if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const code = await exited;
        clearTimeout(timer);
        return code;
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

/** GET `url` and parse JSON (any status). */
export async function getJson<T = unknown>(url: string): Promise<{ status: number; body: T }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as T };
}

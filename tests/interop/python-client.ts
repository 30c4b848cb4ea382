/**
 * Runs Python interoperability clients: the pinned virtual environment from
 * `python/venv.sh` (created once, cached outside the repository), and one
 * script run with its output collected.
 */
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const PYTHON_DIR = fileURLToPath(new URL('./python/', import.meta.url));

/** Absolute path of a file in `tests/interop/python/`. */
export function pythonFile(name: string): string {
  return `${PYTHON_DIR}${name}`;
}

/**
 * The python of the environment pinned by `requirements` (a file name in the
 * python directory), installing it first when not cached; a cold install
 * takes under a minute, so callers give their hook a generous timeout.
 */
export async function venvPython(requirements: string): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [pythonFile('venv.sh'), pythonFile(requirements)], { timeout: 300_000 });
  return stdout.trim();
}

/** What a finished script printed. */
export interface ScriptRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `python args…`, killing it after `timeoutMs`; never rejects on a non-zero exit. */
export function runPython(python: string, args: readonly string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', ...options.env }, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The last line of `stdout` parsed as JSON: scripts print their one result object last. */
export function lastJsonLine<T>(run: ScriptRun): T {
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new Error(`script printed no JSON result (exit ${String(run.code)}):\n${run.stdout}\n${run.stderr}`);
  }
}

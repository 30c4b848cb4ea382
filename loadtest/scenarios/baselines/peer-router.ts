/**
 * The peer LLM router baselines: the vLLM project's own router (PyPI
 * `vllm-router`, github.com/vllm-project/router, a Rust router shipped as a
 * Python wheel) over the same engines switchyard is measured on. It is what a
 * platform team running vLLM would reach for first, so it is the comparison
 * that matters most after nginx. SGLang's gateway (PyPI `smg`, the Shepherd
 * Model Gateway that vllm-router forked from) runs the same way, for the
 * prefix-affinity benchmark's `cache_aware` comparison.
 *
 * Configured as an operator would for a static fleet: a fixed
 * `--worker-urls` list, round-robin (its default, cache_aware, keys on
 * prompt text and is a different experiment), retries and circuit breaker
 * left at their shipped defaults, warnings-only logging. Installed on demand
 * by `install-peer-router.sh` into a per-version cached venv; when that
 * cannot work here (no python3, no wheel for this platform, no registry
 * access) the caller gets a reason instead of an exception, so a benchmark
 * run can skip the column rather than fail.
 */
import { execFile, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { atNormalPriority } from '../../../tests/kit/processes.ts';
import { freePorts } from '../../../tests/kit/free-ports.ts';

const INSTALL_SCRIPT = fileURLToPath(new URL('./install-peer-router.sh', import.meta.url));
/** Peer routers this module installs and starts. */
export type PeerRouterName = 'vllm-router' | 'smg';

/** How each peer is started: its subcommand and the log level its CLI spells "warnings only". */
const PEERS: Readonly<Record<PeerRouterName, { readonly subcommand: readonly string[]; readonly logLevel: string; readonly project: string }>> = {
  'vllm-router': { subcommand: [], logLevel: 'warning', project: 'vllm-project/router' },
  smg: { subcommand: ['launch'], logLevel: 'warn', project: 'lightseekorg/smg, SGLang model gateway' },
};
/** Start-up takes ~0.4 s warm; the first start after install also compiles Python bytecode. */
const START_TIMEOUT_MS = 60_000;
/** SIGTERM drains gracefully in ~1.5 s; past this it is killed. */
const STOP_GRACE_MS = 5_000;
/** How much of the router's output is kept to explain a failed start. */
const LOG_TAIL_CHARS = 4_000;

const execFileAsync = promisify(execFile);
/** Its Rust logger colours output even into a pipe and ignores NO_COLOR; built from a char code because ESLint forbids control characters in regex literals. */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** A started peer router. */
export interface PeerRouter {
  /** Base URL of its OpenAI-compatible listener. */
  readonly url: string;
  /** The router process (the Python launcher hosting the Rust router in-process; `taskset` execs into it). */
  readonly pid: number | undefined;
  /** Exact package, version and flags, for the report. */
  readonly description: string;
  /** SIGTERM, then SIGKILL after a few seconds; resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

/** Load-balancing policies of `vllm-router --policy` that need no engine-side extras (smg spells consistent hashing `consistent_hashing`; the others are the same). */
export type PeerRouterPolicy = 'round_robin' | 'random' | 'power_of_two' | 'consistent_hash' | 'cache_aware';

/** The installed router executable and its version, or why there is none. */
export type PeerRouterInstall = { readonly executable: string; readonly version: string } | { readonly unavailable: string };

/**
 * Installs the pinned `peer` (default `vllm-router`) into its cached venv (a
 * no-op once done) and reports the executable and the version actually installed.
 */
export async function installPeerRouter(peer: PeerRouterName = 'vllm-router'): Promise<PeerRouterInstall> {
  let executable: string;
  try {
    const { stdout } = await execFileAsync('bash', [INSTALL_SCRIPT, peer], { encoding: 'utf8', maxBuffer: 1 << 20 });
    executable = stdout.trim().split('\n').at(-1) ?? '';
  } catch (err) {
    // execFile rejects with the child's stderr attached; the script's reason is its last line.
    const stderr = (err as { stderr?: unknown }).stderr;
    const reason = typeof stderr === 'string' && stderr.trim() !== '' ? stderr.trim().split('\n').at(-1) : String(err);
    return { unavailable: reason ?? String(err) };
  }
  if (executable === '') return { unavailable: `${INSTALL_SCRIPT} printed no executable path` };
  try {
    // Ask the venv rather than trusting the pin, so the report names what really ran.
    const python = join(dirname(executable), 'python');
    const { stdout } = await execFileAsync(python, ['-c', `import importlib.metadata as m; print(m.version(${JSON.stringify(peer)}))`], { encoding: 'utf8' });
    return { executable, version: stdout.trim() };
  } catch (err) {
    return { unavailable: `${peer} is installed at ${executable} but its version cannot be read: ${String(err)}` };
  }
}

/**
 * Installs (cached) and starts the peer router over `backends` (base URLs)
 * serving `model`, pinned to `core` when given; `{ unavailable }` with a
 * reason when it cannot be installed here. Resolves once `/v1/models`
 * through the router lists `model`; rejects (after killing it) when it
 * installed but does not come up.
 */
export async function startPeerRouter(options: {
  readonly backends: readonly string[];
  readonly model: string;
  readonly core?: number;
  /** Defaults to `round_robin`, the policy comparable with a plain L7 balancer. */
  readonly policy?: PeerRouterPolicy;
  /** Which peer; defaults to `vllm-router`. */
  readonly peer?: PeerRouterName;
}): Promise<PeerRouter | { unavailable: string }> {
  if (options.backends.length === 0) throw new Error('startPeerRouter needs at least one backend');
  const name = options.peer ?? 'vllm-router';
  const peer = PEERS[name];
  const installed = await installPeerRouter(name);
  if ('unavailable' in installed) return installed;

  // It always serves Prometheus metrics on a second port (0 is rejected, and
  // omitting the flag means 29000), so it gets a free port of its own too.
  const [port, metricsPort] = (await freePorts(2)) as [number, number];
  const args = [
    ...peer.subcommand,
    '--host', '127.0.0.1',
    '--port', String(port),
    '--worker-urls', ...options.backends,
    '--policy', options.policy ?? 'round_robin',
    '--log-level', peer.logLevel,
    '--prometheus-host', '127.0.0.1',
    '--prometheus-port', String(metricsPort),
    // Defaults wait up to 600 s, checking every 30 s, for an engine that is
    // not healthy (GET /health) at start; fail fast instead, the engines are already up.
    '--worker-startup-timeout-secs', '30',
    '--worker-startup-check-interval', '1',
  ];
  // --log-level does not reach the Rust side's log filter in 0.1.17 (INFO lines
  // still appear); RUST_LOG does. Nothing is logged per successful request at
  // warn, so logging costs the benchmark nothing; failures still print ERROR lines.
  const env = { ...process.env, RUST_LOG: 'warn' };
  const child =
    options.core === undefined
      ? spawn(installed.executable, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
      : spawn('taskset', ['-c', String(options.core), installed.executable, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  // Children inherit the load generator's lowered priority; the measured process must not.
  atNormalPriority(child.pid);

  // Its output is drained (an unread pipe would fill and stall the router) and
  // only the tail kept, to explain a failed start.
  let tail = '';
  const keep = (text: string) => {
    tail = (tail + text).slice(-LOG_TAIL_CHARS);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('close', () => resolve());
  });
  const gone = () => spawnError !== undefined || child.exitCode !== null || child.signalCode !== null;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (gone()) {
        // Already exited: wait for its pipes to close so the log tail is complete.
        if (spawnError === undefined) await exited;
        return;
      }
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };

  const url = `http://127.0.0.1:${port}`;
  const startedAt = Date.now();
  const explain = () => readableTail(tail);
  let lastSeen = 'no answer yet';
  for (;;) {
    if (gone()) {
      await stop();
      throw new Error(`${name} ${installed.version} did not start (${spawnError?.message ?? `exit ${String(child.exitCode ?? child.signalCode)}`}): ${explain()}`);
    }
    if (Date.now() - startedAt > START_TIMEOUT_MS) {
      await stop();
      throw new Error(`${name} ${installed.version} did not answer /v1/models within ${START_TIMEOUT_MS} ms (last: ${lastSeen}): ${explain()}`);
    }
    // /v1/models is proxied to an engine, so an answer also proves the forwarding path works.
    const listed = await listedModels(url);
    if (Array.isArray(listed)) {
      if (listed.includes(options.model)) break;
      // The engines are up and answered: waiting longer will not change the model they serve.
      await stop();
      throw new Error(`the engines behind ${name} serve [${listed.join(', ')}], not ${options.model}`);
    }
    lastSeen = listed;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const pinned = options.core === undefined ? '' : `taskset -c ${options.core} `;
  return {
    url,
    pid: child.pid,
    description: `${name} ${installed.version} (PyPI, ${peer.project}): RUST_LOG=warn ${pinned}${name} ${args.join(' ')}`,
    stop,
  };
}

/** The model ids `/v1/models` at `url` lists (none when it answered with an empty list), or what went wrong. */
async function listedModels(url: string): Promise<string[] | string> {
  try {
    const response = await fetch(`${url}/v1/models`, { signal: AbortSignal.timeout(2_000) });
    if (!response.ok) return `HTTP ${response.status}`;
    const body = (await response.json()) as { data?: { id?: unknown }[] };
    const ids = (body.data ?? []).map((m) => String(m.id));
    return ids.length > 0 ? ids : 'an empty model list';
  } catch (err) {
    return String(err);
  }
}

/** The router's output without its unconditional `DEBUG:` start-up prints and terminal colours. */
function readableTail(output: string): string {
  return output
    .replace(ANSI_COLOUR, '')
    .split('\n')
    .filter((line) => !line.startsWith('DEBUG: ') && line.trim() !== '')
    .join('\n');
}

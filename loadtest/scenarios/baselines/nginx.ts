/**
 * nginx as a plain reverse proxy over the same engines: the classic L7 proxy
 * a platform team could deploy instead of switchyard, measured in the same
 * run. Configured the way a careful operator would for LLM traffic: upstream
 * keep-alive, response buffering off (streams pass through as they come),
 * request bodies up to 16 MiB held in memory, long read timeouts, no access
 * log. One worker process, so it can be pinned to one core like the router.
 * The binary is the static nginx from the pinned wheel (tests/kit/servers.ts);
 * everything it writes stays in its temporary directory, so it runs as any user.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../../tests/kit/free-ports.ts';
import { nginxBinary } from '../../../tests/kit/servers.ts';

/** A running nginx. */
export interface Nginx {
  /** Base URL of its listener. */
  readonly url: string;
  /** The master process; its single worker is its child. */
  readonly pid: number | undefined;
  /** Version and configuration summary, for the report. */
  readonly description: string;
  /** Pids of master and worker, for CPU and memory accounting. */
  pids(): number[];
  stop(): Promise<void>;
}

/**
 * A whole configuration around `http` (the http block's contents): one
 * worker in the foreground, files kept in `dir`, no access log, room for
 * `workerConnections` sockets.
 */
export function nginxFrame(options: { readonly dir: string; readonly workerConnections: number }, http: string): string {
  // Started by root, the workers would run as the build's default user and could not use root's 0700 directory;
  // started by anyone else, they run as that user and the directive would only add a warning.
  const user = process.getuid?.() === 0 ? 'user root root;\n' : '';
  return `daemon off;
worker_processes 1;
worker_rlimit_nofile ${options.workerConnections + 32};
${user}pid ${options.dir}/nginx.pid;
error_log ${options.dir}/error.log warn;
events {
  worker_connections ${options.workerConnections};
}
http {
  access_log off;
  client_body_temp_path ${options.dir}/client_body;
${http}}
`;
}

/** The configuration file text. */
export function nginxConfig(options: { readonly dir: string; readonly port: number; readonly upstreams: readonly string[]; readonly maxConnections: number }): string {
  const servers = options.upstreams.map((url) => `    server ${new URL(url).host};`).join('\n');
  // Each client connection may hold an upstream one.
  return nginxFrame(
    { dir: options.dir, workerConnections: options.maxConnections * 2 + 32 },
    `  proxy_temp_path ${options.dir}/proxy;
  upstream engines {
${servers}
    keepalive 1024;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${options.port} backlog=4096;
    keepalive_requests 1000000;
    client_max_body_size 16m;
    client_body_buffer_size 16m;
    location / {
      proxy_pass http://engines;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 600s;
      proxy_send_timeout 600s;
    }
  }
`,
  );
}

function childPids(pid: number): number[] {
  const out = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  return out.stdout.split('\n').filter(Boolean).map(Number);
}

/**
 * Starts nginx over `upstreams` (base URLs), pinned to `core` when given;
 * resolves once it accepts connections.
 */
export function startNginx(options: { readonly upstreams: readonly string[]; readonly core?: number; readonly maxConnections?: number }): Promise<Nginx> {
  const maxConnections = options.maxConnections ?? 12_000;
  return runNginx((dir, port) => nginxConfig({ dir, port, upstreams: options.upstreams, maxConnections }), '1 worker, upstream keepalive 1024, proxy_buffering off', options.core);
}

/**
 * Runs nginx with the configuration `configFor` writes for its own
 * directory and a free port, pinned to `core` when given; resolves once it
 * accepts connections. `summary` follows the version in its description.
 */
export async function runNginx(configFor: (dir: string, port: number) => string, summary: string, core?: number): Promise<Nginx> {
  const binary = await nginxBinary();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-nginx-'));
  const [port] = (await freePorts(1)) as [number];
  const config = join(dir, 'nginx.conf');
  writeFileSync(config, configFor(dir, port));
  // -e: errors before the configuration is read go to the directory too, not to a system log path.
  const args = ['-p', dir, '-e', join(dir, 'error.log'), '-c', config];
  const child = core === undefined ? spawn(binary, args, { stdio: 'ignore' }) : spawn('taskset', ['-c', String(core), binary, ...args], { stdio: 'ignore' });
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const version = spawnSync(binary, ['-v'], { encoding: 'utf8' }).stderr.trim();
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  while (!(await fetch(`${url}/`).then(() => true, () => false))) {
    if (Date.now() > deadline || child.exitCode !== null || spawnError !== undefined) {
      // Leave nothing behind: a running child would keep the harness alive after the failure.
      const log = join(dir, 'error.log');
      const reason = spawnError?.message ?? (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').slice(-3).join(' | ') : 'no error log');
      if (child.exitCode === null && child.pid !== undefined) child.kill('SIGKILL');
      if (child.pid !== undefined) await exited;
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start: ${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    url,
    pid: child.pid,
    description: `${version}, ${summary}`,
    pids: () => (child.pid === undefined ? [] : [child.pid, ...childPids(child.pid)]),
    stop: async () => {
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

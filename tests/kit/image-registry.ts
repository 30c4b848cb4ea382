/**
 * The router image without Docker: its layers assembled from the same file tree the Dockerfile
 * produces, pushed to a local OCI registry, and pulled back, with go-containerregistry's `crane`
 * (v0.22.1, built from the Go module proxy and cached by tests/kit/crane/build.sh).
 *
 * The base is the smallest that runs the image's Node: glibc, libstdc++, libgcc and the CA
 * certificates from Debian's own packages (`apt-get download`, `dpkg-deb -x`; cached by package
 * version), where the release image uses distroless Node 24 (which is those same Debian 12
 * packages plus Node). Node is the Node 24 binary of the npm `node` package (Debian 12's nodejs
 * is 18). The image config (entrypoint, command, user, working directory, environment) is read
 * from the Dockerfile's final stage, so the two cannot drift.
 *
 * Needs root only where the caller runs what it unpacks; tar, apt-get and dpkg-deb.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyImageSources, productionNodeModules } from './image-app.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = process.env['SWITCHYARD_CACHE'] ?? join(process.env['HOME'] ?? tmpdir(), '.cache', 'switchyard');
/** The Debian packages of the base layer: what Node needs to run, and the CA bundle. */
const BASE_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6', 'ca-certificates'];

let cranePath: string | undefined;

/** Path of the crane binary, built (or found cached) on first use. */
export function craneBinary(): string {
  if (cranePath !== undefined) return cranePath;
  const out = execFileSync('bash', [join(REPO, 'tests/kit/crane/build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 20 * 60_000 });
  const path = /^CRANE=(.+)$/m.exec(out)?.[1];
  if (path === undefined) throw new Error(`crane build.sh printed no CRANE= line: ${out}`);
  cranePath = path;
  return path;
}

/** Runs crane against a plain-HTTP registry; returns its stdout. */
export function crane(args: readonly string[]): string {
  return execFileSync(craneBinary(), [...args, '--insecure'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
}

/** A local OCI registry (`crane registry serve`, in memory), on a loopback port. */
export interface LocalRegistry {
  /** HOST:PORT, for image references and `oci://` chart references. */
  readonly address: string;
  stop(): Promise<void>;
}

/** Starts a registry on 127.0.0.1 and waits until it answers the OCI distribution API. */
export async function startRegistry(): Promise<LocalRegistry> {
  const child: ChildProcess = spawn(craneBinary(), ['registry', 'serve', '--address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const address = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const port = /serving on port (\d+)/.exec(output);
      if (port !== null) resolve(`127.0.0.1:${port[1]}`);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`crane registry serve exited ${code}: ${output}`)));
    setTimeout(() => reject(new Error(`crane registry serve named no port within 10 s: ${output}`)), 10_000).unref();
  });
  for (let i = 0; ; i++) {
    const answered = await fetch(`http://${address}/v2/`).then((r) => r.status === 200, () => false);
    if (answered) break;
    if (i === 50) throw new Error(`the registry at ${address} does not answer /v2/`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The final stage's image config, as the Dockerfile declares it. */
export interface DockerfileImageConfig {
  readonly entrypoint: string[];
  readonly cmd: string[];
  readonly user: string;
  readonly workdir: string;
  readonly env: Readonly<Record<string, string>>;
}

/** ENTRYPOINT, CMD (exec form), USER, WORKDIR and ENV of the Dockerfile's final stage. */
export function dockerfileImageConfig(): DockerfileImageConfig {
  const text = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
  const final = text.slice(text.lastIndexOf('\nFROM '));
  const one = (name: string) => new RegExp(`^${name} (.+)$`, 'm').exec(final)?.[1];
  const execForm = (name: string) => {
    const value = one(name);
    if (value === undefined || !value.startsWith('[')) throw new Error(`Dockerfile: the final stage has no exec-form ${name}`);
    return JSON.parse(value) as string[];
  };
  const env = Object.fromEntries([...final.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
  return { entrypoint: execForm('ENTRYPOINT'), cmd: execForm('CMD'), user: one('USER') ?? '0', workdir: one('WORKDIR') ?? '/', env };
}

/** Writes `dir` as an uncompressed layer tarball, every entry owned by root. */
function layer(dir: string, file: string): string {
  execFileSync('tar', ['--numeric-owner', '--owner=0', '--group=0', '-C', dir, '-cf', file, '.']);
  return file;
}

/** The base layer's tree: the Debian packages unpacked, the CA bundle assembled as update-ca-certificates would. */
function baseTree(dir: string): void {
  const debs = join(CACHE, 'image-base', 'debs');
  mkdirSync(debs, { recursive: true });
  const missing = BASE_PACKAGES.filter((name) => !readdirSync(debs).some((f) => f.startsWith(`${name}_`)));
  if (missing.length > 0) {
    const download = () => execFileSync('apt-get', ['download', ...missing], { cwd: debs, stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
    try {
      download();
    } catch {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', timeout: 300_000 });
      download();
    }
  }
  for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) execFileSync('dpkg-deb', ['-x', join(debs, deb), dir]);
  const certs = join(dir, 'usr/share/ca-certificates');
  const bundle = readdirSync(certs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.crt'))
    .sort()
    .map((f) => readFileSync(join(certs, f), 'utf8'))
    .join('');
  mkdirSync(join(dir, 'etc/ssl/certs'), { recursive: true });
  writeFileSync(join(dir, 'etc/ssl/certs/ca-certificates.crt'), bundle);
  mkdirSync(join(dir, 'tmp'));
  chmodSync(join(dir, 'tmp'), 0o1777);
  writeFileSync(join(dir, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n');
  writeFileSync(join(dir, 'etc/group'), 'root:x:0:\nnonroot:x:65532:\n');
}

/** A pushed image: its tag reference and its manifest digest. */
export interface PushedImage {
  readonly ref: string;
  readonly digest: string;
}

/**
 * Assembles the router image (base, Node, /app: three layers) and pushes it to `registry` as
 * `switchyard:<tag>`, with the Dockerfile's entrypoint, command, user, working directory and env.
 */
export function pushRouterImage(registry: LocalRegistry, tag: string): PushedImage {
  const work = mkdtempSync(join(tmpdir(), 'switchyard-image-'));
  try {
    const base = join(work, 'base');
    baseTree(base);
    const node = join(work, 'node');
    const config = dockerfileImageConfig();
    const nodePath = config.entrypoint[0] as string;
    mkdirSync(join(node, nodePath, '..'), { recursive: true });
    cpSync(realpathSync(join(REPO, 'node_modules/node/bin/node')), join(node, nodePath));
    const app = join(work, 'app');
    copyImageSources(join(app, 'app'));
    cpSync(productionNodeModules(), join(app, 'app/node_modules'), { recursive: true });
    const ref = `${registry.address}/switchyard:${tag}`;
    crane(['append', '--oci-empty-base', '--platform', 'linux/amd64', '-t', ref, '-f', layer(base, join(work, 'base.tar')), '-f', layer(node, join(work, 'node.tar')), '-f', layer(app, join(work, 'app.tar'))]);
    const env = Object.entries(config.env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
    crane(['mutate', ref, '-t', ref, '--set-platform', 'linux/amd64', `--entrypoint=${config.entrypoint.join(',')}`, `--cmd=${config.cmd.join(',')}`, '--user', config.user, '--workdir', config.workdir, ...env]);
    return { ref, digest: crane(['digest', ref]).trim() };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The image config a registry serves for `ref` (the OCI config's `config` object). */
export function pulledImageConfig(ref: string): { Entrypoint?: string[]; Cmd?: string[]; User?: string; WorkingDir?: string; Env?: string[] } {
  return (JSON.parse(crane(['config', ref])) as { config: Record<string, never> }).config;
}

/** Pulls `ref` and unpacks its flattened file system into a fresh directory (the caller removes it). */
export function unpackImage(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-rootfs-'));
  execFileSync('bash', ['-o', 'pipefail', '-c', `"$0" export --insecure "$1" - | tar -x --numeric-owner -C "$2"`, craneBinary(), ref, dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
  if (!existsSync(join(dir, 'app/router/cli/bin.ts'))) throw new Error(`${ref} unpacked without /app/router/cli/bin.ts`);
  return dir;
}

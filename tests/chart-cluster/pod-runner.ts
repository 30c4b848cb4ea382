/**
 * Runs one container of a Pod the kube-apiserver admitted, on this machine,
 * the way a kubelet and container runtime would as far as the chart's wiring
 * is concerned (there is no kubelet or runtime here):
 * - its own mount namespace with a fresh root (tmpfs) holding only /usr, /dev,
 *   /proc, /sys, a minimal /etc, the image's /app tree and node binary, and
 *   the pod's volume mounts at their paths (read-only where the mount says);
 *   the root is remounted read-only when readOnlyRootFilesystem is set;
 * - a network namespace of the caller's (its own interfaces and ports), or
 *   the host's;
 * - the command and args as rendered, run as the pod's runAsUser/runAsGroup
 *   with fsGroup as a supplementary group, no new privileges, and no
 *   capabilities (bounding and inheritable sets emptied);
 * - the container's env (`value` entries), plus what the caller says the
 *   kubelet injects (KUBERNETES_SERVICE_HOST/PORT).
 * Volume contents (ConfigMap data, Secret items, the projected service
 * account token) are materialized by the caller from the API.
 *
 * With an unpacked image (`rootfs`), the root is that file system alone, read-only where the
 * pod says so, and the host's env and setpriv start the command from /.runner.
 *
 * Needs root, util-linux (unshare, setpriv), coreutils (chroot, env -C) and
 * iproute2 for a network namespace. Every mount lives in the container's
 * mount namespace and disappears with its process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ImageApp } from '../kit/image-app.ts';

/** The parts of a core/v1 Pod the runner reads. */
export interface PodLike {
  metadata: { name: string };
  spec: {
    securityContext?: { runAsUser?: number; runAsGroup?: number; fsGroup?: number; runAsNonRoot?: boolean };
    containers: ContainerLike[];
  };
}

/** The parts of a core/v1 Container the runner reads. */
export interface ContainerLike {
  name: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  securityContext?: { runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean; readOnlyRootFilesystem?: boolean };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
}

/** A volume's files (name → content and mode), or an emptyDir. */
export type VolumeContent = { readonly files: Readonly<Record<string, { content: string; mode: number }>> } | 'emptyDir';

/**
 * What the image provides: either the Dockerfile's layout made locally (the host's /usr, the
 * `app` tree and `nodeBinary` at `nodePath`), or a whole image file system pulled from a
 * registry and unpacked (`rootfs`), which then is the container's root and nothing of the
 * host's is.
 */
export type ImageLike = LocalImage | UnpackedImage;

/** The Dockerfile's layout, made locally. */
export interface LocalImage extends ImageBasics {
  /** Path of node inside the image (values image.node), bound to `nodeBinary`. */
  readonly nodePath: string;
  readonly nodeBinary: string;
  readonly app: ImageApp;
}

/** An image's file system, unpacked (tests/kit/image-registry.ts, unpackImage). */
export interface UnpackedImage extends ImageBasics {
  readonly rootfs: string;
}

/** The image config every image has. */
interface ImageBasics {
  /** The image's ENV and USER and WORKDIR. */
  readonly env: Readonly<Record<string, string>>;
  readonly user: number;
  readonly workingDir: string;
}

/** Options of {@link runContainer}. */
export interface RunOptions {
  readonly pod: PodLike;
  readonly container: string;
  readonly image: ImageLike;
  /** Contents by volume name; every volume the container mounts must be here. */
  readonly volumes: Readonly<Record<string, VolumeContent>>;
  /** Network namespace to run in (`ip netns`); the host's when absent. */
  readonly netns?: string;
  /** What the kubelet would inject, e.g. KUBERNETES_SERVICE_HOST/PORT. */
  readonly env?: Readonly<Record<string, string>>;
  /** The container's /etc/hosts. */
  readonly hosts?: string;
}

/** A running container. */
export interface ContainerRun {
  readonly child: ChildProcess;
  /** Resolves with the exit code (or 128 + signal) once the process ended. */
  readonly exited: Promise<number>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends `signal` (default SIGTERM), waits for the exit, removes the scratch directory. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;

/** Starts the container; throws when the pod asks for something not emulated here. */
export function runContainer(options: RunOptions): ContainerRun {
  const { pod, image } = options;
  const container = pod.spec.containers.find((c) => c.name === options.container);
  if (container === undefined) throw new Error(`pod ${pod.metadata.name} has no container ${options.container}`);
  const uid = container.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser ?? image.user;
  const gid = container.securityContext?.runAsGroup ?? pod.spec.securityContext?.runAsGroup ?? uid;
  const fsGroup = pod.spec.securityContext?.fsGroup;
  const nonRoot = container.securityContext?.runAsNonRoot ?? pod.spec.securityContext?.runAsNonRoot ?? false;
  if (nonRoot && uid === 0) throw new Error('runAsNonRoot with uid 0: a kubelet would refuse to start this container');

  const work = mkdtempSync(join(tmpdir(), 'switchyard-pod-'));
  const root = join(work, 'root');
  mkdirSync(root);
  const lines = ['set -euo pipefail', `R=${quote(root)}`, 'mount -t tmpfs -o mode=0755 switchyard-root "$R"'];
  lines.push(...('rootfs' in image ? unpackedRoot(image) : localRoot(image)));
  lines.push('mkdir -p "$R/dev" "$R/proc" "$R/sys"', 'mount --rbind /dev "$R/dev"', 'mount --rbind /proc "$R/proc"', 'mount --rbind /sys "$R/sys"');
  writeFileSync(join(work, 'hosts'), options.hosts ?? '127.0.0.1 localhost\n');
  lines.push(`cp ${quote(join(work, 'hosts'))} "$R/etc/hosts"`, `printf '%s\\n' ${quote(`nameserver 127.0.0.1`)} > "$R/etc/resolv.conf"`);

  for (const mount of container.volumeMounts ?? []) {
    if (mount.subPath !== undefined) throw new Error(`volumeMount ${mount.name}: subPath is not emulated`);
    const volume = options.volumes[mount.name];
    if (volume === undefined) throw new Error(`volume ${mount.name} (mounted at ${mount.mountPath}) has no content`);
    lines.push(`mkdir -p "$R"${quote(mount.mountPath)}`);
    if (volume === 'emptyDir') {
      lines.push(`mount -t tmpfs -o mode=1777 emptydir "$R"${quote(mount.mountPath)}`);
      continue;
    }
    const source = join(work, 'volumes', mount.name);
    if (!materialized.has(source)) materialize(source, volume, fsGroup);
    lines.push(`mount --bind${mount.readOnly === true ? ' -o ro' : ''} ${quote(source)} "$R"${quote(mount.mountPath)}`);
  }
  if (container.securityContext?.readOnlyRootFilesystem === true) lines.push('mount -o remount,ro "$R"');

  const env: Record<string, string> = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOSTNAME: pod.metadata.name, ...image.env };
  for (const entry of container.env ?? []) {
    if (entry.value === undefined) throw new Error(`env ${entry.name}: only literal values are emulated`);
    env[entry.name] = entry.value;
  }
  Object.assign(env, options.env);
  const command = [...(container.command ?? []), ...(container.args ?? [])];
  if (command.length === 0) throw new Error('the container has no command (the image entrypoint is not emulated)');
  const privileges = [`--reuid=${uid}`, `--regid=${gid}`, fsGroup === undefined ? '--clear-groups' : `--groups=${fsGroup}`, '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'];
  // An unpacked image has no env or setpriv of its own (no shell, no tools): the host's are copied
  // to /.runner, and setpriv's one library besides libc is given to it alone, through the loader.
  const [envBin, setpriv] = 'rootfs' in image ? ['/.runner/env', `/lib64/ld-linux-x86-64.so.2 --library-path /.runner /.runner/setpriv`] : ['/usr/bin/env', '/usr/bin/setpriv'];
  lines.push(
    [
      `exec chroot "$R" ${envBin} -i`,
      `-C ${quote(container.workingDir ?? image.workingDir)}`,
      ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
      setpriv,
      ...privileges,
      '--',
      ...command.map(quote),
    ].join(' '),
  );
  writeFileSync(join(work, 'setup.sh'), `${lines.join('\n')}\n`);

  const prefix = options.netns === undefined ? [] : ['ip', 'netns', 'exec', options.netns];
  const argv = [...prefix, 'unshare', '--mount', '--propagation', 'private', '--', 'bash', join(work, 'setup.sh')];
  const child = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15)));
  });
  process.once('exit', () => child.kill('SIGKILL'));
  return {
    child,
    exited,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      rmSync(work, { recursive: true, force: true });
      return code;
    },
  };
}

/** Setup lines for a root made of the host's /usr, the image's /app tree and its node binary. */
function localRoot(image: LocalImage): string[] {
  const lines = ['mkdir -p "$R/usr" "$R/etc" "$R/app"'];
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) lines.push(`ln -s usr/${link} "$R/${link}"`);
  lines.push('mount --rbind /usr "$R/usr"', 'mount -o remount,bind,ro "$R/usr"');
  lines.push('for f in passwd group nsswitch.conf ld.so.cache; do if [ -e "/etc/$f" ]; then cp "/etc/$f" "$R/etc/$f"; fi; done');
  lines.push(`mount --bind -o ro ${quote(image.app.dir)} "$R/app"`, `mount --bind -o ro ${quote(image.app.nodeModules)} "$R/app/node_modules"`);
  lines.push(`mkdir -p "$R"${quote(dirname(image.nodePath))}`, `touch "$R"${quote(image.nodePath)}`, `mount --bind -o ro ${quote(image.nodeBinary)} "$R"${quote(image.nodePath)}`);
  return lines;
}

/**
 * Setup lines for a root made of an unpacked image alone: each of its top-level directories bound
 * read-only, its /etc copied (the kubelet writes hosts and resolv.conf there), an empty /tmp, and
 * the host's env and setpriv (with libcap-ng) in /.runner to start the command.
 */
function unpackedRoot(image: UnpackedImage): string[] {
  const F = quote(image.rootfs);
  return [
    `F=${F}`,
    'for entry in "$F"/* "$F"/.[!.]*; do',
    '  [ -e "$entry" ] || [ -L "$entry" ] || continue',
    '  name=$(basename "$entry")',
    '  case "$name" in etc|tmp|dev|proc|sys) continue ;; esac',
    '  if [ -L "$entry" ]; then cp -P "$entry" "$R/$name"',
    '  elif [ -d "$entry" ]; then mkdir "$R/$name" && mount --rbind "$entry" "$R/$name" && mount -o remount,bind,ro "$R/$name"',
    '  else touch "$R/$name" && mount --bind -o ro "$entry" "$R/$name"; fi',
    'done',
    'mkdir -p "$R/etc" "$R/tmp" "$R/.runner"',
    'if [ -d "$F/etc" ]; then cp -a "$F/etc/." "$R/etc/"; fi',
    'chmod 1777 "$R/tmp"',
    'cp /usr/bin/env /usr/bin/setpriv "$(readlink -f /lib/x86_64-linux-gnu/libcap-ng.so.0)" "$R/.runner/"',
    'mv "$R/.runner/$(basename "$(readlink -f /lib/x86_64-linux-gnu/libcap-ng.so.0)")" "$R/.runner/libcap-ng.so.0"',
  ];
}

const materialized = new Set<string>();

/** Writes a volume's files the way the kubelet does: root-owned, group fsGroup, the given modes. */
function materialize(dir: string, volume: Exclude<VolumeContent, 'emptyDir'>, fsGroup: number | undefined): void {
  mkdirSync(dir, { recursive: true });
  chmodSync(dirname(dir), 0o755);
  chmodSync(dir, 0o755);
  for (const [name, file] of Object.entries(volume.files)) {
    const path = join(dir, name);
    writeFileSync(path, file.content);
    if (fsGroup !== undefined) chownSync(path, 0, fsGroup);
    chmodSync(path, file.mode);
  }
  materialized.add(dir);
}

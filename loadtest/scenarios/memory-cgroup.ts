/**
 * A memory cgroup for one measured process: a hard limit the kernel enforces
 * (the process is OOM-killed above it, as in a Kubernetes container), no
 * swap, and what the kernel charged read back while the process runs.
 *
 * cgroup v2 (what Kubernetes nodes run today): a child of the cgroup2 mount
 * root with `memory.max` and `memory.swap.max = 0`; socket buffers are part
 * of `memory.current`. cgroup v1 (hybrid hosts): a child of this process's
 * own memory cgroup, so the measured process stays inside whatever limit the
 * host set for us; `memory.limit_in_bytes` and, where swap is accounted, the
 * same `memory.memsw.limit_in_bytes`. v1 charges TCP buffers to a separate
 * counter, switched on here by setting its limit, and {@link CgroupSample}
 * adds it back so both versions report the same quantity.
 */
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the kernel charged to the cgroup, read at one moment. */
export interface CgroupSample {
  /** Bytes charged now, socket buffers included (v2 `memory.current`; v1 usage plus TCP). */
  readonly currentBytes: number;
  /** Highest charge the kernel recorded since creation (v2 `memory.peak`; v1 max usage plus max TCP, an upper bound as the two peaks need not coincide); undefined where the kernel keeps none. */
  readonly peakBytes: number | undefined;
  /** Of `currentBytes`, socket buffers. */
  readonly socketBytes: number;
  /** Times the limit was hit and reclaim could not make room (v2 `oom` events; v1 `failcnt`). */
  readonly ooms: number;
  /** Processes the kernel killed for the limit. */
  readonly oomKills: number;
}

/** A created memory cgroup. */
export interface MemoryCgroup {
  readonly version: 1 | 2;
  readonly path: string;
  readonly limitBytes: number;
  /** A command prefix that joins the cgroup and then execs the rest of the command line, so every byte the process allocates is charged. */
  readonly launcher: readonly string[];
  sample(): CgroupSample;
  /** Removes the cgroup; call after its processes exited. */
  remove(): void;
}

const read = (file: string): string => readFileSync(file, 'utf8').trim();
const readNumber = (file: string): number => Number(read(file));
/** `key value` lines (memory.events, memory.stat, memory.oom_control) as numbers. */
function keyed(file: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of read(file).split('\n')) {
    const [key, value] = line.split(' ');
    if (key !== undefined && value !== undefined) out[key] = Number(value);
  }
  return out;
}

/** Mount points by filesystem type: `cgroup2`, or `cgroup` with its controller options. */
function cgroupMounts(): { path: string; type: string; options: string[] }[] {
  return read('/proc/self/mounts')
    .split('\n')
    .map((line) => line.split(' '))
    .filter((f) => f[2] === 'cgroup2' || f[2] === 'cgroup')
    .map((f) => ({ path: f[1] as string, type: f[2] as string, options: (f[3] ?? '').split(',') }));
}

function launcherFor(procs: string): string[] {
  return ['sh', '-c', `echo $$ > '${procs}' && exec "$@"`, 'sh'];
}

function createV2(root: string, name: string, limitBytes: number): MemoryCgroup {
  if (!read(join(root, 'cgroup.controllers')).split(' ').includes('memory')) throw new Error(`the memory controller is not available in ${root}`);
  // Children get the memory controller only when the parent hands it down.
  if (!read(join(root, 'cgroup.subtree_control')).split(' ').includes('memory')) writeFileSync(join(root, 'cgroup.subtree_control'), '+memory');
  const path = join(root, name);
  mkdirSync(path);
  writeFileSync(join(path, 'memory.max'), String(limitBytes));
  try {
    writeFileSync(join(path, 'memory.swap.max'), '0');
  } catch {
    // no swap controller: the host has no swap to give
  }
  return {
    version: 2,
    path,
    limitBytes,
    launcher: launcherFor(join(path, 'cgroup.procs')),
    sample: () => {
      const events = keyed(join(path, 'memory.events'));
      let peakBytes: number | undefined;
      try {
        peakBytes = readNumber(join(path, 'memory.peak'));
      } catch {
        // memory.peak arrived in Linux 5.19
      }
      return { currentBytes: readNumber(join(path, 'memory.current')), peakBytes, socketBytes: keyed(join(path, 'memory.stat'))['sock'] ?? 0, ooms: events['oom'] ?? 0, oomKills: events['oom_kill'] ?? 0 };
    },
    remove: () => removeDir(path),
  };
}

function createV1(mount: string, name: string, limitBytes: number): MemoryCgroup {
  const own = read('/proc/self/cgroup')
    .split('\n')
    .map((line) => line.split(':'))
    .find((f) => (f[1] ?? '').split(',').includes('memory'));
  const path = join(mount, own?.[2] ?? '/', name);
  mkdirSync(path);
  writeFileSync(join(path, 'memory.limit_in_bytes'), String(limitBytes));
  try {
    // Memory plus swap at the same limit: no swap at all.
    writeFileSync(join(path, 'memory.memsw.limit_in_bytes'), String(limitBytes));
  } catch {
    // swap accounting off: there is no swap counter to limit
  }
  let tcp = true;
  try {
    // Setting a TCP limit is what turns TCP buffer accounting on in v1.
    writeFileSync(join(path, 'memory.kmem.tcp.limit_in_bytes'), String(limitBytes));
  } catch {
    tcp = false;
  }
  const tcpBytes = (file: string) => (tcp ? readNumber(join(path, file)) : 0);
  return {
    version: 1,
    path,
    limitBytes,
    launcher: launcherFor(join(path, 'cgroup.procs')),
    sample: () => {
      const socketBytes = tcpBytes('memory.kmem.tcp.usage_in_bytes');
      return {
        currentBytes: readNumber(join(path, 'memory.usage_in_bytes')) + socketBytes,
        peakBytes: readNumber(join(path, 'memory.max_usage_in_bytes')) + tcpBytes('memory.kmem.tcp.max_usage_in_bytes'),
        socketBytes,
        ooms: readNumber(join(path, 'memory.failcnt')),
        oomKills: keyed(join(path, 'memory.oom_control'))['oom_kill'] ?? 0,
      };
    },
    remove: () => removeDir(path),
  };
}

function removeDir(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // still busy (a process lingers): the host cleans it up with its parent
  }
}

/**
 * Creates a memory cgroup named `name` limited to `limitBytes`, v2 when the
 * memory controller is on the unified hierarchy, v1 otherwise; or says why
 * none can be made here (not root, no memory controller, delegation refused).
 */
export function createMemoryCgroup(name: string, limitBytes: number): MemoryCgroup | { unavailable: string } {
  try {
    const mounts = cgroupMounts();
    const unified = mounts.find((m) => m.type === 'cgroup2' && read(join(m.path, 'cgroup.controllers')).split(' ').includes('memory'));
    if (unified !== undefined) return createV2(unified.path, name, limitBytes);
    const v1 = mounts.find((m) => m.type === 'cgroup' && m.options.includes('memory'));
    if (v1 !== undefined) return createV1(v1.path, name, limitBytes);
    return { unavailable: 'no cgroup mount with the memory controller' };
  } catch (err) {
    return { unavailable: (err as Error).message };
  }
}

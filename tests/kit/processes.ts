/**
 * What benchmarks need around the processes they measure: CPU time from /proc,
 * priorities, core pinning, and waiting for a router to know its models. The
 * processes themselves start through router-process.ts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** CPU time (user + system, milliseconds) a process has used so far, from /proc; undefined elsewhere. */
export function cpuTimeMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may contain spaces) start at field 3; utime and stime are 14 and 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return undefined;
  }
}

/** USER_HZ: 100 on Linux for every mainstream architecture. */
const CLOCK_TICKS_PER_S = 100;

/**
 * Gives a measured process normal CPU priority even when this (load
 * generating) process was deprioritised with {@link deprioritiseSelf}:
 * children inherit their parent's niceness.
 */
export function atNormalPriority(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    setPriority(pid, 0);
  } catch {
    // raising priority needs privileges; without them the run is just less fair to the router
  }
}

/**
 * Lowers this process's CPU priority. On a two-core machine the load
 * generator (standing in for clients on other machines) must not starve the
 * router or the probe that measures it. Returns what puts the priority back:
 * `bench all` runs every scenario in one process, and a scenario whose engine
 * simulators run in this process (cold-start) must not inherit the nice 10
 * (its engines then read requests late, and the router's safe start took
 * requests on their way for an engine faster than the round trip).
 */
export function deprioritiseSelf(): () => void {
  const before = getPriority();
  try {
    setPriority(10);
  } catch {
    // not permitted: measure anyway
  }
  return () => {
    try {
      setPriority(before);
    } catch {
      // raising priority back needs privileges where lowering did not; the next scenario runs niced
    }
  };
}

/** True when `taskset` can pin processes here. */
export function canPin(): boolean {
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

/** Polls a router's `/v1/models` until it lists a model (the engines' models are known). */
export async function waitForModels(base: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const list = (await (await fetch(`${base}/v1/models`)).json()) as { data: unknown[] };
    if (list.data.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${base} never listed a model`);
}

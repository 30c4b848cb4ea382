/**
 * Gives V8's helper threads (concurrent marking, parallel scavenging,
 * background compilation: the `V8Worker` threads of Node's platform) the
 * lowest scheduling priority, so they run when the event loop has nothing to
 * do and never keep it waiting.
 *
 * Why: the router answers every request on one thread, and on a core it
 * shares with its own helpers (a pinned router, or one CPU's worth of quota)
 * the kernel time-slices them as equals. Measured on a router pinned to one
 * core at 5,000 requests a second (`perf sched latency`): the four helpers
 * took 4 ms slices in turn while the event loop, ready to run, waited 24 ms,
 * and that run's p99 read 37 ms against the engine's 2. At nice 19 a helper
 * weighs 15 against the event loop's 1,024, so the loop preempts it as soon
 * as it wakes; the helpers still get every idle moment of the core.
 *
 * Linux only (thread names and per-thread nice values come from `/proc`);
 * elsewhere it does nothing. Raising a nice value needs no privilege.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The nice value the helpers get: the lowest priority there is. */
export const HELPER_NICE = 19;

/** Thread name of V8's platform worker threads in Node. */
const HELPER_THREAD_NAME = 'V8Worker';

/** Where threads are listed and how a thread's priority is set; a test may point them elsewhere. */
export interface ThreadControl {
  /** `/proc/self/task` or the equivalent. */
  readonly taskDir: string;
  readonly setPriority: (threadId: number, nice: number) => void;
}

const SYSTEM: ThreadControl = { taskDir: '/proc/self/task', setPriority };

/**
 * Lowers the priority of this process's V8 helper threads; returns the
 * thread IDs it lowered. Other threads (the event loop, the admin port's
 * worker, libuv's pool) keep theirs: the admin port must answer probes
 * however busy the router is.
 */
export function lowerHelperThreadPriority(control: ThreadControl = SYSTEM): number[] {
  let threads: string[];
  try {
    threads = readdirSync(control.taskDir);
  } catch {
    return []; // Not Linux, or /proc not mounted: nothing to do.
  }
  const lowered: number[] = [];
  for (const thread of threads) {
    let name: string;
    try {
      name = readFileSync(`${control.taskDir}/${thread}/comm`, 'utf8').trim();
    } catch {
      continue; // The thread ended while we looked.
    }
    if (name !== HELPER_THREAD_NAME) continue;
    const threadId = Number(thread);
    try {
      control.setPriority(threadId, HELPER_NICE);
      lowered.push(threadId);
    } catch {
      // A seccomp profile may refuse setpriority; the router runs as before.
    }
  }
  return lowered;
}

/**
 * Gives V8's helper threads (concurrent marking, parallel scavenging,
 * background compilation: the `V8Worker` threads of Node's platform) a low
 * scheduling priority, so that on a core they share with the event loop they
 * yield to it instead of taking turns with it as equals.
 *
 * Why: the router answers every request on one thread, and when it is
 * pinned to one core the kernel time-slices that thread and its helpers as
 * equals. Measured on a router pinned to one core at 5,000 requests a second
 * (`perf sched latency`): the four helpers took 4 ms slices in turn while the
 * event loop, ready to run, waited 24 ms, and that run's p99 read 37 ms
 * against the engine's 2. At nice 10 a helper weighs 110 against the loop's
 * 1,024; in the same run the loop waited 6.9 ms at most. Not lower: at nice
 * 19 (weight 15) the loop waited 4.9 ms at most, but background compilation
 * starved while the loop was busy, and a router started cold under full
 * load (`ab -k -c 64`, 20,000 requests in) spent 82-84 µs a request against
 * 70-76, until its code caught up (the same after 200,000 requests).
 *
 * What it does not do: under a CPU quota on several cores (a Kubernetes CPU
 * limit) the helpers run on other cores and spend the same quota; nice
 * ranks threads on one core only. The cost: where other threads of normal
 * priority keep that core busy, a helper the loop waits for (V8 joins its
 * parallel scavenge) gets little of it, and the pause grows; a pinned
 * router's other threads (the admin port's worker, libuv's pool) are mostly
 * idle, and the benchmarks report the router's scavenge pauses.
 *
 * Linux only (thread names and per-thread nice values come from `/proc`);
 * elsewhere it does nothing. Raising a nice value needs no privilege.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** How many nice steps the helpers get below the event loop (which keeps its own). */
export const HELPER_NICE_OFFSET = 10;

/** The largest nice value Linux has. */
const LOWEST_PRIORITY = 19;

/** Thread name of V8's platform worker threads in Node. */
const HELPER_THREAD_NAME = 'V8Worker';

/** Where threads are listed and how priorities are read and set; a test may point them elsewhere. */
export interface ThreadControl {
  /** `/proc/self/task` or the equivalent. */
  readonly taskDir: string;
  /** The calling thread's (the event loop's) nice value. */
  readonly eventLoopNice: () => number;
  readonly setPriority: (threadId: number, nice: number) => void;
}

const SYSTEM: ThreadControl = { taskDir: '/proc/self/task', eventLoopNice: () => getPriority(), setPriority };

/**
 * Lowers the priority of this process's V8 helper threads to
 * {@link HELPER_NICE_OFFSET} steps below the event loop's (a router started
 * niced keeps the gap, and a helper is never raised); returns the thread IDs
 * it lowered. Other threads (the event loop, the admin port's
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
  const nice = Math.min(LOWEST_PRIORITY, control.eventLoopNice() + HELPER_NICE_OFFSET);
  const lowered: number[] = [];
  for (const thread of threads) {
    let name: string;
    try {
      name = readFileSync(`${control.taskDir}/${thread}/comm`, 'utf8').trim();
    } catch {
      continue; // The thread ended while we looked.
    }
    const threadId = Number(thread);
    // `--title V8Worker` would give the event loop the helpers' name.
    if (name !== HELPER_THREAD_NAME || threadId === process.pid) continue;
    try {
      control.setPriority(threadId, nice);
      lowered.push(threadId);
    } catch {
      // A seccomp profile may refuse setpriority; the router runs as before.
    }
  }
  return lowered;
}

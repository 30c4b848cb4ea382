/**
 * Runs a client command and measures the CPU that it and every process it
 * starts used, from /proc, so a benchmark client's own cost is known next to
 * what it measured: a client that needs a core of its own on a shared
 * machine slows what it measures.
 *
 * Two readings, because a multi-process client (AIPerf runs one Python
 * process per service) cannot be read in one place while it runs:
 *
 * - Over its whole life, exactly: the command runs under `bash -c`, which
 *   waits for it and then reads its own `/proc/PID/stat`; `cutime + cstime`
 *   there hold the CPU of every descendant that was reaped (each parent waits
 *   for its children, so the times roll up the tree).
 * - Over a window (e.g. the client's measured phase): `/proc` is polled while
 *   the command runs, summing `utime + stime + cutime + cstime` over the live
 *   tree (a reaped process moves from its own line into its parent's
 *   `cutime`, so nothing counts twice), and the sum is interpolated at the
 *   window's ends. The error is at most one poll interval of CPU at each end.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Clock ticks per second of `/proc/PID/stat` times: USER_HZ, 100 on every Linux architecture Node runs on. */
const TICKS_PER_S = 100;

/** One reading of the tree's CPU. */
export interface CpuSample {
  /** Wall-clock time of the reading (ms since the epoch). */
  readonly atMs: number;
  /** CPU used by the tree so far (ms). */
  readonly cpuMs: number;
}

/** A finished measured command. */
export interface MeasuredRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall-clock start and end (ms since the epoch). */
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  /** CPU of the whole tree over its whole life (ms); exact for every reaped process. */
  readonly cpuMs: number;
  /** Polled readings, ending with the exact total at `endedAtMs`. */
  readonly samples: readonly CpuSample[];
}

/** `utime + stime` and `cutime + cstime` (ticks), and the parent pid, of one `/proc/PID/stat` line. */
function parseStat(line: string): { own: number; children: number; ppid: number } {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(fields[i - 3]);
  return { ppid: n(4), own: n(14) + n(15), children: n(16) + n(17) };
}

/** CPU (ms) of `root` and its live descendants right now. */
export function treeCpuMs(root: number): number {
  const stats = new Map<number, { own: number; children: number; ppid: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      stats.set(Number(entry), parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8')));
    } catch {
      // exited between the listing and the read: its time is in its parent's cutime by the next reading
    }
  }
  const kids = new Map<number, number[]>();
  for (const [pid, stat] of stats) kids.set(stat.ppid, [...(kids.get(stat.ppid) ?? []), pid]);
  let ticks = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    const stat = stats.get(pid);
    if (stat !== undefined) ticks += stat.own + stat.children;
    stack.push(...(kids.get(pid) ?? []));
  }
  return (ticks * 1000) / TICKS_PER_S;
}

/**
 * Runs `command args…` with `env` added to this process's environment,
 * polling its tree's CPU every `pollMs`; kills the tree's head after
 * `timeoutMs`. Never rejects on a non-zero exit.
 */
export function runMeasured(command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs: number; pollMs?: number }): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-cpu-'));
  const statFile = join(dir, 'stat');
  // bash waits for the command, then records its own stat line: cutime/cstime now hold the whole tree.
  const script = '"${@:2}"; rc=$?; read -r line < /proc/$$/stat; printf "%s\\n" "$line" > "$1"; exit $rc';
  const startedAtMs = Date.now();
  const child = spawn('bash', ['-c', script, 'bash', statFile, command, ...args], { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const samples: CpuSample[] = [];
  const poll = setInterval(() => {
    if (child.pid !== undefined) samples.push({ atMs: Date.now(), cpuMs: treeCpuMs(child.pid) });
  }, options.pollMs ?? 200);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    const done = () => {
      clearInterval(poll);
      clearTimeout(timer);
    };
    child.once('error', (err) => {
      done();
      rmSync(dir, { recursive: true, force: true });
      reject(err);
    });
    child.once('close', (code) => {
      done();
      const endedAtMs = Date.now();
      let cpuMs = samples.at(-1)?.cpuMs ?? 0;
      try {
        const stat = parseStat(readFileSync(statFile, 'utf8'));
        cpuMs = ((stat.own + stat.children) * 1000) / TICKS_PER_S;
      } catch {
        // killed before bash could record its stat: the last polled reading stands
      }
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, stderr, startedAtMs, endedAtMs, cpuMs, samples: [...samples, { atMs: endedAtMs, cpuMs }] });
    });
  });
}

/** The tree's CPU (ms) at `atMs`, linearly interpolated between the readings around it. */
export function cpuMsAt(samples: readonly CpuSample[], atMs: number): number {
  let before: CpuSample = { atMs: -Infinity, cpuMs: 0 };
  for (const sample of samples) {
    if (sample.atMs >= atMs) {
      if (before.atMs === -Infinity) return sample.cpuMs;
      return before.cpuMs + ((sample.cpuMs - before.cpuMs) * (atMs - before.atMs)) / (sample.atMs - before.atMs);
    }
    before = sample;
  }
  return before.cpuMs;
}

/** Cores the tree used on average between `fromMs` and `toMs` (wall clock, ms since the epoch): 1 = one full core. */
export function coresBetween(samples: readonly CpuSample[], fromMs: number, toMs: number): number {
  return (cpuMsAt(samples, toMs) - cpuMsAt(samples, fromMs)) / Math.max(1, toMs - fromMs);
}

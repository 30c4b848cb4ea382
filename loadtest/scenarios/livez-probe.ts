/**
 * Samples a probe URL (`/livez`) from a process of its own, so the latency
 * measured is the router's, not that of a load generator's busy event loop.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { atNormalPriority } from '../../tests/kit/processes.ts';

const SAMPLER = fileURLToPath(new URL('./probe-sampler.ts', import.meta.url));

/** A running sampler. */
export interface ProbeSampler {
  /** Resolves with the latencies once the sampler ends by itself. */
  readonly done: Promise<number[]>;
  /** Ends sampling; resolves with every probe latency (ms; -1 for a failed probe). */
  stop(): Promise<number[]>;
}

/** Starts sampling `url` every `everyMs` until stopped (or `maxDurationS` passes). */
export function startProbe(url: string, everyMs = 50, maxDurationS = 3600): ProbeSampler {
  const child = spawn(process.execPath, [SAMPLER, '--url', url, '--every-ms', String(everyMs), '--duration-s', String(maxDurationS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  atNormalPriority(child.pid);
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const result = new Promise<number[]>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve((JSON.parse(text) as { latencies: number[] }).latencies) : reject(new Error(`probe sampler exited with ${String(code)}`)))),
  );
  return {
    done: result,
    stop: () => {
      child.kill('SIGTERM');
      return result;
    },
  };
}

/** Samples `url` every 50 ms for `durationS` seconds; resolves with the latencies. */
export function sampleProbe(url: string, durationS: number): Promise<number[]> {
  return startProbe(url, 50, durationS).done;
}

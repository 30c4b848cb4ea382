/**
 * Samples the router's admin `/livez` the way the kubelet does (a fresh
 * connection each time, every `everyMs`), from a worker thread: the fuzz
 * run's own main thread builds megabyte bodies and would otherwise add its
 * own stalls to the latencies it reports.
 */
import { Worker } from 'node:worker_threads';

/** What the sampler saw. */
export interface LivezReport {
  readonly samples: number;
  /** Slowest answer (ms). */
  readonly worstMs: number;
  /** Samples that were not a 200 within the timeout, with what happened. */
  readonly failures: readonly string[];
}

const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, everyMs, timeoutMs } = workerData;
let running = true;
parentPort.on('message', () => { running = false; });
function once() {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ ms: performance.now() - started, status: 0, error: err.message }));
  });
}
(async () => {
  while (running) {
    const sample = await once();
    parentPort.postMessage(sample);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  parentPort.postMessage('stopped');
})();
`;

/** Starts sampling `url`; `failures` grows as failed samples arrive; `stop()` resolves with the report. */
export function sampleLivez(url: string, everyMs = 200, timeoutMs = 5_000): { readonly failures: readonly string[]; stop(): Promise<LivezReport> } {
  const worker = new Worker(SOURCE, { eval: true, workerData: { url, everyMs, timeoutMs } });
  let samples = 0;
  let worstMs = 0;
  const failures: string[] = [];
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (message: 'stopped' | { ms: number; status: number; error?: string }) => {
      if (message === 'stopped') return resolve();
      samples++;
      worstMs = Math.max(worstMs, message.ms);
      if (message.status !== 200) failures.push(`${message.status} after ${message.ms.toFixed(0)} ms${message.error === undefined ? '' : `: ${message.error}`}`);
    });
    worker.on('error', (err: Error) => {
      failures.push(`sampler failed: ${err.message}`);
      resolve();
    });
  });
  return {
    failures,
    async stop() {
      worker.postMessage('stop');
      await stopped;
      await worker.terminate();
      return { samples, worstMs, failures };
    },
  };
}

/**
 * A closed-loop load generator: `concurrency` workers each send a request,
 * read the whole response, and send the next, for a fixed time after a
 * warm-up. Streaming responses are read chunk by chunk to time the first
 * byte, and every response is validated (status, and `[DONE]` for streams).
 */
import { Pool } from 'undici';

/** One measured run. */
export interface RunSpec {
  /** Base URL of the target, e.g. http://127.0.0.1:8080. */
  readonly target: string;
  readonly path: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly stream: boolean;
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

/** Raw samples of a run (milliseconds). */
export interface RunSamples {
  readonly latencies: number[];
  /** Time to the first response body byte. */
  readonly ttfb: number[];
  readonly errors: number;
  /** First few error descriptions, for inspection. */
  readonly errorExamples: string[];
  /** Measured window length (ms). */
  readonly windowMs: number;
}

const DONE = Buffer.from('data: [DONE]');

/** Runs the load and returns the samples taken after the warm-up. */
export async function runClosedLoop(spec: RunSpec): Promise<RunSamples> {
  const pool = new Pool(spec.target, { connections: spec.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  const ttfb: number[] = [];
  const errorExamples: string[] = [];
  let errors = 0;
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const stopAt = measureFrom + spec.durationMs;
  const headers = { 'content-type': 'application/json', ...spec.headers };

  const worker = async () => {
    while (performance.now() < stopAt) {
      const sent = performance.now();
      let first = 0;
      let failure: string | undefined;
      try {
        const response = await pool.request({ path: spec.path, method: 'POST', headers, body: spec.body });
        let tail: Buffer = Buffer.alloc(0);
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          if (first === 0) first = performance.now();
          tail = chunk.length >= 64 ? chunk.subarray(chunk.length - 64) : Buffer.concat([tail, chunk]).subarray(-64);
        }
        if (response.statusCode !== 200) failure = `status ${response.statusCode}`;
        else if (spec.stream && !tail.includes(DONE)) failure = 'stream ended without [DONE]';
      } catch (err) {
        failure = (err as Error).message;
      }
      const done = performance.now();
      if (sent < measureFrom || done > stopAt) continue;
      if (failure !== undefined) {
        errors++;
        if (errorExamples.length < 5) errorExamples.push(failure);
        continue;
      }
      latencies.push(done - sent);
      ttfb.push((first || done) - sent);
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  await pool.close();
  return { latencies, ttfb, errors, errorExamples, windowMs: spec.durationMs };
}

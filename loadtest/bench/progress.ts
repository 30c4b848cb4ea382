/**
 * The live progress line of a benchmark run: elapsed time, request rate,
 * failures and latency percentiles so far, merged over every generator
 * process. Rewritten in place on a terminal, printed every ten seconds when
 * output goes to a file, and silent in quiet mode (CI).
 */
import { Histogram } from './histogram.ts';
import type { LoadProgress } from './load-spec.ts';

const TERMINAL_EVERY_MS = 1000;
const LOG_EVERY_MS = 10_000;

export class ProgressLine {
  readonly #label: string;
  readonly #latest: (LoadProgress | undefined)[];
  readonly #terminal = process.stderr.isTTY;
  readonly #quiet: boolean;
  // The first line comes one interval in, when there is a rate to show.
  #printedAt = performance.now();
  #previousSent = 0;
  #previousAt = performance.now();
  #wroteLine = false;

  constructor(label: string, generators: number, quiet: boolean) {
    this.#label = label;
    this.#latest = Array.from({ length: generators }, () => undefined);
    this.#quiet = quiet;
  }

  /** Records generator `index`'s latest counters and prints when due. */
  update(index: number, progress: LoadProgress): void {
    this.#latest[index] = progress;
    if (this.#quiet) return;
    const now = performance.now();
    if (now - this.#printedAt < (this.#terminal ? TERMINAL_EVERY_MS : LOG_EVERY_MS)) return;
    this.#printedAt = now;
    const reports = this.#latest.filter((p) => p !== undefined);
    const sent = reports.reduce((n, p) => n + p.sent, 0);
    const failed = reports.reduce((n, p) => n + p.failed, 0);
    const shed = reports.reduce((n, p) => n + p.shed, 0);
    const rate = (((sent - this.#previousSent) * 1000) / (now - this.#previousAt)).toFixed(0);
    this.#previousSent = sent;
    this.#previousAt = now;
    const latency = Histogram.of(reports.map((p) => p.e2e));
    const elapsed = Math.max(...reports.map((p) => p.elapsedMs)) / 1000;
    const latencies = latency.count === 0 ? 'no response yet' : `p50 ${latency.quantile(0.5).toFixed(1)} ms, p99 ${latency.quantile(0.99).toFixed(1)} ms`;
    const line = `${this.#label}: ${elapsed.toFixed(0)} s, ${sent} sent, ${rate}/s, ${failed} failed, ${shed} shed, ${latencies}`;
    if (this.#terminal) {
      process.stderr.write(`\r\x1b[2K${line}`);
      this.#wroteLine = true;
    } else process.stderr.write(`${line}\n`);
  }

  /** Ends the in-place line so later output starts on a fresh one. */
  close(): void {
    if (this.#wroteLine) process.stderr.write('\n');
  }
}

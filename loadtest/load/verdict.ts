/**
 * Whether the load generator kept up with its own schedule. A client that ran
 * out of CPU, stalled its event loop or sent an open loop's requests late
 * measures itself, not the target; the verdict says so next to the numbers
 * instead of leaving a reader to mistake a saturated client for a slow
 * target. The thresholds are the benchmarks' own (loadtest/bench/generators.ts,
 * `generatorBottleneck`); this only words them for a report.
 */
import type { GeneratorRun } from '../bench/generators.ts';
import { Histogram } from '../bench/histogram.ts';
import type { StepLoad } from './options.ts';

/** The verdict on one step's generator. */
export interface KeptUp {
  readonly keptUp: boolean;
  /** One line: yes or NO, and the facts behind it. */
  readonly line: string;
  /** Open loop: how late the generator sent, p99 (ms); undefined in a closed loop, which has no schedule. */
  readonly sendLagP99Ms: number | undefined;
}

/** The verdict on `run`, a step of `load` run by `processes` generator processes. */
export function keptUp(run: GeneratorRun, load: StepLoad): KeptUp {
  const lag = Histogram.of([run.sendLag]);
  const sendLagP99Ms = load.kind === 'rate' ? (lag.count === 0 ? 0 : lag.quantile(0.99)) : undefined;
  const cpu = Math.max(0, ...run.processes.map((p) => p.cpuShare));
  const loop = Math.max(0, ...run.processes.map((p) => p.loopDelayP99Ms));
  const facts = [
    sendLagP99Ms === undefined ? 'closed loop: each client sends when its last answer is in' : `send lag p99 ${sendLagP99Ms.toFixed(1)} ms`,
    `busiest generator process at ${Math.round(cpu * 100)}% of a core`,
    `event-loop delay p99 ${loop.toFixed(0)} ms`,
  ].join('; ');
  if (run.generatorBottleneck === undefined) {
    return { keptUp: true, line: `yes: ${sendLagP99Ms === undefined ? 'the generator was never the bottleneck' : 'requests went out on schedule'} (${facts})`, sendLagP99Ms };
  }
  const advice = `rerun with --processes ${run.processes.length * 2} or from a machine with more cores`;
  return { keptUp: false, line: `NO: ${run.generatorBottleneck}. These numbers may measure this client, not the target: ${advice} (${facts})`, sendLagP99Ms };
}

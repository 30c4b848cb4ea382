/**
 * The steps of a `switchyard bench load` run: one load spec per rate or
 * concurrency asked for, run one after the other through the benchmarks'
 * generator processes (loadtest/bench/generators.ts), each with its warm-up.
 */
import { runGenerators, type GeneratorRun } from '../bench/generators.ts';
import type { LoadSpec } from '../bench/load-spec.ts';
import { stepLabel, type LoadOptions, type StepLoad } from './options.ts';

/** What every step shares besides the options: decided once the target answered its preflight. */
export interface RunContext {
  /** Unique per run, so that request ids of two runs against one router never collide. */
  readonly runId: string;
  readonly origin: string;
  readonly path: string;
  /** Extra request headers (the Authorization header when a key is given). */
  readonly headers: Readonly<Record<string, string>>;
  /** Check that every answer's id carries its request's id (the target derives ids from `x-request-id`). */
  readonly checkIds: boolean;
}

/** One step as it ran. */
export interface StepRun {
  readonly load: StepLoad;
  /** ISO time the step started. */
  readonly startedAt: string;
  readonly run: GeneratorRun;
}

/** The generator spec of step `index`. */
export function stepSpec(options: LoadOptions, context: RunContext, load: StepLoad, index: number): LoadSpec {
  return {
    target: context.origin,
    request: {
      path: context.path,
      model: options.model,
      stream: options.stream,
      tools: false,
      promptBytes: 0,
      headers: context.headers,
      users: options.sessions,
      checkIds: context.checkIds,
      shape: { promptTokens: options.promptTokens, outputTokens: options.outputTokens, ignoreEos: options.ignoreEos, turns: options.turns },
    },
    mode: load.kind === 'rate' ? { kind: 'open', ratePerS: load.perS, maxConnections: options.maxConnections * options.processes } : { kind: 'closed', concurrency: load.clients },
    warmupMs: options.warmupS * 1000,
    durationMs: options.durationS * 1000,
    idPrefix: `${context.runId}-s${index}`,
    seed: 1 + index,
  };
}

/** Runs every step in order; `onStart` hears of each before it starts. */
export async function runSteps(options: LoadOptions, context: RunContext, onStart: (load: StepLoad, index: number) => void): Promise<StepRun[]> {
  const steps: StepRun[] = [];
  for (const [index, load] of options.steps.entries()) {
    onStart(load, index);
    const startedAt = new Date().toISOString();
    const run = await runGenerators(stepSpec(options, context, load, index), { processes: options.processes, label: `bench load ${stepLabel(load)}`, quiet: options.quiet });
    steps.push({ load, startedAt, run });
  }
  return steps;
}

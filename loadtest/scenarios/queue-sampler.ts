/**
 * Samples every engine's waiting queue on a fixed period and condenses the
 * samples into a queue-imbalance figure. The engines run in this process, so
 * the sample is their scheduler's exact queue length, not a scrape that is
 * already hundreds of milliseconds old.
 */

/** The part of an engine the sampler reads. */
export interface QueueSource {
  readonly scheduler: { readonly waiting: number };
}

/** Condensed queue samples of one run. */
export interface QueueSummary {
  /**
   * Mean over samples of (max waiting / mean waiting) across engines, in
   * [1, number of engines]; samples where no engine had a queue are skipped
   * (0/0 says nothing about balance). NaN when every sample was skipped.
   */
  readonly imbalance: number;
  /** Samples taken in the window. */
  readonly samples: number;
  /** Samples in which at least one engine had a queue (the ones `imbalance` averages). */
  readonly samplesWithQueue: number;
  /** Largest queue seen, per engine, in engine order. */
  readonly maxWaiting: number[];
  /** Mean queue length per engine over all samples, in engine order. */
  readonly meanWaiting: number[];
}

/** Condenses samples (one array of per-engine waiting counts per sample). */
export function summarizeQueues(samples: readonly (readonly number[])[], engines: number): QueueSummary {
  const maxWaiting: number[] = Array.from({ length: engines }, () => 0);
  const sumWaiting: number[] = Array.from({ length: engines }, () => 0);
  let ratioSum = 0;
  let withQueue = 0;
  for (const sample of samples) {
    let max = 0;
    let sum = 0;
    sample.forEach((waiting, i) => {
      max = Math.max(max, waiting);
      sum += waiting;
      maxWaiting[i] = Math.max(maxWaiting[i] as number, waiting);
      sumWaiting[i] = (sumWaiting[i] as number) + waiting;
    });
    if (sum === 0) continue;
    withQueue++;
    ratioSum += max / (sum / engines);
  }
  return {
    imbalance: withQueue === 0 ? Number.NaN : ratioSum / withQueue,
    samples: samples.length,
    samplesWithQueue: withQueue,
    maxWaiting,
    meanWaiting: sumWaiting.map((sum) => (samples.length === 0 ? 0 : sum / samples.length)),
  };
}

/**
 * Samples `engines` every `periodMs` while `inWindow()` says so. Call
 * {@link QueueSampler.stop} to end it; it owns only its interval timer.
 */
export class QueueSampler {
  readonly #samples: number[][] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(engines: readonly QueueSource[], periodMs: number, inWindow: () => boolean) {
    this.#timer = setInterval(() => {
      if (inWindow()) this.#samples.push(engines.map((engine) => engine.scheduler.waiting));
    }, periodMs);
  }

  /** Stops sampling and returns the raw samples. */
  stop(): number[][] {
    clearInterval(this.#timer);
    return this.#samples;
  }
}

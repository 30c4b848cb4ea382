/**
 * Scorer: the load score (outstanding work over capacity, see
 * router/load/load-formulas.ts) as a rating, 1 / (1 + load): 1 when idle,
 * 0.5 at capacity, towards 0 as the queue grows. Monotonic, so a weighted
 * maximum over it alone is least-load.
 */
import { z } from 'zod';
import type { Candidate } from '../candidate.ts';
import type { PickContext, RatingScorer } from '../pick.ts';
import type { ScorerPlugin } from '../plugin.ts';

export const loadScoreScorer: RatingScorer = {
  name: 'load',
  rate<T extends Candidate>(context: PickContext<T>, out: Float64Array): void {
    const { candidates, pool, n } = context;
    for (let i = 0; i < n; i++) out[i] = 1 / (1 + (candidates[pool[i] as number] as T).loadScore);
  },
};

/** `load-score`: no parameters. */
export const loadScorePlugin: ScorerPlugin<Record<string, never>> = {
  name: 'load-score',
  description: 'The load score as a rating, 1 / (1 + outstanding work over capacity): alone, least-load.',
  parameters: z.strictObject({}),
  create: () => loadScoreScorer,
};

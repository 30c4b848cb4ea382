/**
 * Scorer: free KV cache, 1 − usage (an engine that does not export usage
 * rates 1). With a small weight beside the load score it breaks load ties
 * towards the engine with more cache room.
 */
import { z } from 'zod';
import type { Candidate } from '../candidate.ts';
import type { PickContext, RatingScorer } from '../pick.ts';
import type { ScorerPlugin } from '../plugin.ts';

export const kvUsageScorer: RatingScorer = {
  name: 'kvUsage',
  rate<T extends Candidate>(context: PickContext<T>, out: Float64Array): void {
    const { candidates, pool, n } = context;
    for (let i = 0; i < n; i++) out[i] = 1 - (candidates[pool[i] as number] as T).kvCacheUsage;
  },
};

/** `kv-usage`: no parameters. */
export const kvUsagePlugin: ScorerPlugin<Record<string, never>> = {
  name: 'kv-usage',
  description: 'Free KV cache, 1 - usage (1 for an engine that does not export it): with a small weight, breaks load ties towards cache room.',
  parameters: z.strictObject({}),
  create: () => kvUsageScorer,
};

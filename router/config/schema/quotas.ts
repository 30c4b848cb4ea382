/** The `quotas` section: the shared per-tenant quota check. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

export const quotas = z
  .strictObject({
    checkTimeoutMs: positiveMs.max(1_000).default(20).describe('Longest wait for the shared quota check (ms); past it the degraded (local) limit applies.'),
  })
  .prefault({})
  .describe('Per-tenant quotas (limits are in auth.apiKeysFile).');

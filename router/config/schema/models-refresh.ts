/** The `modelsRefresh` section: discovery of the models each endpoint serves. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

export const modelsRefresh = z
  .strictObject({
    intervalMs: positiveMs.default(30_000).describe("How often each endpoint's /v1/models is refreshed (ms)."),
    retryMs: positiveMs.default(2_000).describe('Retry interval while an endpoint\'s models are still unknown (ms).'),
    timeoutMs: positiveMs.default(5_000).describe('Timeout of one /v1/models request (ms).'),
  })
  .prefault({})
  .describe('Discovery of the models each endpoint serves.');

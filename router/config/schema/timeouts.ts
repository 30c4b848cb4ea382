/** The `timeouts` section: upstream timeouts per phase. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

export const timeouts = z
  .strictObject({
    connectMs: positiveMs.default(5_000).describe('Upstream TCP connect timeout (ms).'),
    streamFirstByteMs: positiveMs
      .default(120_000)
      .describe('stream:true: max time from sending the request to the first response body byte (ms).'),
    streamChunkGapMs: positiveMs
      .default(120_000)
      .describe('stream:true: max gap between two response body chunks (ms); there is no total cap.'),
    responseMs: positiveMs
      .default(600_000)
      .describe('Non-streaming requests: budget for the whole upstream response (ms).'),
  })
  .prefault({})
  .describe('Upstream timeouts for every phase of a request.');

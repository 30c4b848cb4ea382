/** The `lifecycle` section: shutdown behaviour. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

export const lifecycle = z
  .strictObject({
    preStopDelayMs: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe('After SIGTERM, keep serving this long with /readyz failing so endpoint removal propagates (ms).'),
    drainTimeoutMs: z
      .number()
      .int()
      .min(0)
      .default(15_000)
      .describe('After the pre-stop delay, max time to let in-flight requests finish before exit (ms).'),
    livenessStallMs: positiveMs
      .default(10_000)
      .describe('/livez fails once the main event loop has not run for this long (ms); probes are answered from a separate thread, so load never delays them.'),
  })
  .prefault({})
  .describe('Shutdown behaviour.');

/** The `sessions` section: sticky sessions shared through Redis. */
import { z } from 'zod';
import { filePath, positiveMs } from './fields.ts';

export const sessions = z
  .strictObject({
    ttlMs: positiveMs.default(3_600_000).describe('With Redis: a session key\'s engine assignment is forgotten after this long without requests (ms, sliding).'),
    localCacheMs: z.number().int().min(0).max(60_000).default(1_000).describe('With Redis: how long a replica reuses an assignment it read before asking Redis again (ms).'),
    localCacheEntries: z.number().int().min(1_000).default(100_000).describe('With Redis: assignments each replica keeps in memory.'),
    localCacheBytes: z
      .number()
      .int()
      .min(1_048_576)
      .default(33_554_432)
      .describe('With Redis: estimated bytes of the assignments each replica keeps in memory (32 MiB; about 240 bytes an entry, keyed by the session\'s 43-character name whatever the key\'s length); the least recently used go first.'),
    keySecretFile: filePath
      .optional()
      .describe(
        "File holding this install's secret for naming sessions (one line, at least 32 characters; the same file on every replica): a session is named by HMAC-SHA256 of (tenant, model, session key), in Redis and in each replica's memory. Unset with Redis: a secret derived from redis.keyPrefix (placement stays consistent, but whoever knows the prefix can test guesses of session keys against Redis; a warning says so at start-up). The chart creates one.",
      ),
  })
  .prefault({})
  .describe('Sticky sessions shared through Redis: a session\'s first engine is stored and every replica follows it while that engine passes the scheduling filters. Without Redis, rendezvous hashing.');

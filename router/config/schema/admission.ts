/** The `admission` section: saturation thresholds, the router queue, router-wide caps. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

export const admission = z
  .strictObject({
    maxWaiting: z
      .number()
      .min(0)
      .optional()
      .describe(
        "An endpoint is saturated when its estimated waiting requests reach this. Default: each engine's own allowance, bounded in time: what it drains while the router refills a freed slot (2 ms; 0 for engines draining under 500 requests a second, and until capacity and answer time are known; the router queue holds the rest). Set, it is a bound replicas sharing Redis keep together: between fleet reads each takes the others to send as it does, not only in bursts.",
      ),
    kvCacheThreshold: z.number().min(0).max(1).default(0.9).describe('An endpoint is saturated when its KV-cache usage reaches this (0-1).'),
    maxInFlightPerEndpoint: z.number().int().min(0).default(0).describe('An endpoint is saturated when the router has this many requests open to it (0: off).'),
    queueLength: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe('Requests that may wait in the router when every candidate is saturated, highest priority first (0: shed at once with 429).'),
    queueMaxWaitMs: positiveMs
      .default(30_000)
      .describe(
        "Longest wait in the router queue (ms). A request is queued only while the queue ahead of it drains within this at the rate the model's engines finish requests; beyond it, 429 at once.",
      ),
    tenantQueueShare: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe(
        'Share of queueLength (0-1) one tenant (API key) may hold while another tenant waits; a tenant over it gets 429, and gives up its newest waiter to another tenant arriving at a full queue (1: no limit). Within a priority the queue serves tenants in turns. Without API keys every request is one tenant.',
      ),
    priorityHeader: z.string().min(1).default('x-priority').describe('Request header carrying the priority: high, normal (default) or low. Low is shed first.'),
    maxInFlight: z.number().int().positive().default(10_000).describe('Router-wide cap on open requests; over it, 429 with Connection: close.'),
    maxConnections: z.number().int().positive().default(20_000).describe('Router-wide cap on open client connections; over it, 429 with Connection: close.'),
    eventLoopLagMs: positiveMs.default(200).describe('Event-loop lag (ms) above which new requests are shed with 429.'),
  })
  .prefault({})
  .describe('Admission: saturation thresholds, the router queue, router-wide caps.');

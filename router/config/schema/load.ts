/** The `load` section: the load view (capacity, ejection, replicas, safe start). */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

export const load = z
  .strictObject({
    defaultCapacity: z
      .number()
      .int()
      .positive()
      .default(256)
      .describe("Capacity (max concurrent sequences) assumed when ranking an endpoint whose capacity is unknown; vLLM's default max-num-seqs."),
    capacity: z
      .record(z.string().min(1), z.number().int().positive())
      .default({})
      .describe('Known capacity per static backend URL (config file only), e.g. {"http://10.0.0.5:8000": 64}.'),
    ejection: z
      .strictObject({
        consecutiveFailures: z.number().int().positive().default(5).describe('Consecutive connect failures, resets, timeouts or 5xx that eject an endpoint.'),
        baseMs: positiveMs.default(10_000).describe('First ejection length (ms); doubles with each repeat.'),
        maxMs: positiveMs.default(300_000).describe('Longest ejection (ms).'),
        maxShare: z.number().min(0).max(1).default(0.5).describe('Most endpoints ejected at once, as a share of all (0-1).'),
      })
      .prefault({})
      .describe('Outlier ejection.'),
    replicas: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Router replicas sharing the engines, for what no Redis shares (with an HPA, its maxReplicas: a count above the true one admits less, never more). The safe start then takes 1/replicas of what a scrape shows an engine running without a queue, so a replica that joins a busy fleet starts at its share. The chart sets it to autoscaling.maxReplicas under an HPA. Counted replicas (replicasFromService) replace it once counted. Unset and not counted: each replica's safe start grows from its own requests only.",
      ),
    replicasFromService: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a Service name (DNS-1035 label)')
      .optional()
      .describe(
        "The router's own Service, in the router's namespace: its replicas are counted from the Service's EndpointSlices (every pod not terminating, starting ones included) and the count replaces load.replicas from the first list on, following each rollout and scale step (needs get/list/watch on endpointslices in that namespace; the chart sets it and grants exactly that). Unset: load.replicas.",
      ),
    safeStart: z
      .strictObject({
        enabled: z
          .boolean()
          .default(true)
          .describe('Limit the requests sent to an engine of unknown capacity until scrapes show what it takes, so a freshly started router does not flood small engines; configured capacity turns it off per endpoint.'),
        initialLimit: z
          .number()
          .int()
          .positive()
          .default(4)
          .describe('Requests one router replica may have open to an engine of unknown capacity at first; grows while the engine keeps up (requests; keep replicas x this near the smallest engine\'s max-num-seqs + admission.maxWaiting).'),
        scrapeIntervalMs: z
          .number()
          .int()
          .min(100)
          .default(250)
          .describe(
            "When a send uses an engine's whole safe-start limit, its /metrics is scraped at once, or this long after its last scrape started, besides the scrape.intervalMs rounds: scrapes are the evidence the limit grows on, so it reaches a fast engine's capacity within a second or two instead of several (ms, >= 100).",
          ),
        ttfbTolerance: z
          .number()
          .gt(1)
          .default(2)
          .describe("A stream's time to first byte above this multiple of the engine's unloaded value (plus 50 ms) means the engine fell behind: the limit halves and stops growing (ratio, > 1)."),
      })
      .prefault({})
      .describe('Safe start for engines of unknown capacity (see docs/load-and-routing.md).'),
  })
  .prefault({})
  .describe('Load view.');

/** The `scrape` section: scraping the engines' Prometheus metrics. */
import { z } from 'zod';
import { positiveMs } from './fields.ts';

/**
 * Engine metric dialects (discovery/endpoint.ts `MetricsDialect`; config is a leaf and cannot
 * import it, and the composition root's hand-over of `scrape.dialects` fails to compile if the two drift).
 */
const metricsDialect = z.enum(['vllm', 'sglang', 'llamacpp', 'tgi', 'auto', 'none']);

export const scrape = z
  .strictObject({
    intervalMs: z.number().int().min(100).default(1_000).describe("How often each engine's /metrics is scraped (ms, >= 100)."),
    timeoutMs: positiveMs.default(500).describe('Timeout of one scrape (ms).'),
    maxBytes: z.number().int().min(1_024).default(4 * 1024 * 1024).describe('Largest /metrics body read (bytes); larger fails the scrape.'),
    concurrency: z.number().int().positive().default(64).describe('Most scrapes in flight at once.'),
    maxAgeMs: positiveMs.optional().describe('A scrape older than this is stale and routing falls back to in-flight counts (ms; default 3 x intervalMs).'),
    dialect: metricsDialect
      .default('auto')
      .describe(
        "Whose metric names the engines serve: vllm, sglang, llamacpp, tgi; auto detects them from each scrape; none never scrapes (routing uses in-flight counts against the safe start's limit). A pod's switchyard.io/metrics-dialect annotation or label overrides it.",
      ),
    dialects: z
      .record(z.string().min(1), metricsDialect)
      .default({})
      .describe('Metric dialect per static backend URL (config file only), e.g. {"http://10.0.0.6:8080": "llamacpp"}.'),
  })
  .prefault({})
  .describe("Scraping the engines' Prometheus metrics.");

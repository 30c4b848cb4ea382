import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import type { EngineSimulator } from '../../loadtest/sim/server.ts';
import { createLogger } from '../../router/log.ts';
import { postJson, startFleet, waitFor, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-dialects';
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const DIALECTS = ['vllm', 'sglang', 'llamacpp', 'tgi'] as const;

interface DebugEndpoint {
  url: string;
  load: { safeStart: { limit: number } | null };
  scrape: { metrics: string; dialect: string; detectedDialect: string | null; waiting: number | null; running: number | null; lastError: string | null };
}

async function debugEndpoints(admin: string): Promise<DebugEndpoint[]> {
  return ((await (await fetch(`${admin}/debug/endpoints`)).json()) as { endpoints: DebugEndpoint[] }).endpoints;
}

function byUrl(endpoints: DebugEndpoint[], engine: EngineSimulator): DebugEndpoint {
  const found = endpoints.find((e) => e.url === engine.url);
  assert.ok(found, engine.url);
  return found;
}

describe('engine metric dialects, end to end', () => {
  let fleet: Fleet;
  const logLines: string[] = [];
  before(async () => {
    const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _e, done) => (logLines.push(chunk.toString()), done()) }));
    fleet = await startFleet(
      [...DIALECTS.map((metricsDialect) => ({ model: MODEL, metricsDialect, knobs: { maxSeqs: 2, ttftMs: 400, itlMs: 0, outputTokens: 2 } })), { model: MODEL, metricsDialect: 'none' as const }],
      ['--scrape-interval-ms', '100'],
      [],
      { logger },
    );
  });
  after(() => fleet.close());

  it('detects each engine\'s dialect and reads its queue and batch from the scrape', async () => {
    // Hold two requests on every engine (its whole batch) so the gauges show them.
    const held = Promise.all(fleet.engines.slice(0, 4).flatMap((engine) => [0, 1].map(() => postJson(`${engine.url}/v1/chat/completions`, chat))));
    await waitFor(() => fleet.engines.slice(0, 4).every((engine) => engine.scheduler.running === 2));
    let endpoints: DebugEndpoint[] = [];
    const deadline = Date.now() + 5_000;
    do {
      endpoints = await debugEndpoints(fleet.admin);
      if (DIALECTS.every((_, i) => byUrl(endpoints, fleet.engines[i]!).scrape.running === 2)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } while (Date.now() < deadline);
    DIALECTS.forEach((dialect, i) => {
      const endpoint = byUrl(endpoints, fleet.engines[i]!);
      assert.equal(endpoint.scrape.dialect, 'auto');
      assert.equal(endpoint.scrape.detectedDialect, dialect);
      assert.equal(endpoint.scrape.metrics, 'fresh', dialect);
      assert.equal(endpoint.scrape.running, 2, `${dialect}: the batch as the engine reports it`);
      assert.equal(endpoint.scrape.waiting, 0, dialect);
    });
    await held;
  });

  it('regression: an engine answering 404 on /metrics is served on in-flight counts under the safe start, marked unavailable, and logged once', async () => {
    const silent = fleet.engines[4]!;
    // Longer than a scrape stays fresh (3 intervals): the endpoint counts as having no metrics.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const answers = await Promise.all(Array.from({ length: 10 }, () => postJson(`${fleet.base}/v1/chat/completions`, chat)));
    assert.ok(answers.every((a) => a.status === 200 || a.status === 429), `statuses ${answers.map((a) => a.status).join(',')}`);
    const endpoint = byUrl(await debugEndpoints(fleet.admin), silent);
    assert.equal(endpoint.scrape.metrics, 'unavailable');
    assert.equal(endpoint.scrape.detectedDialect, null);
    assert.match(endpoint.scrape.lastError ?? '', /404/);
    assert.ok(endpoint.load.safeStart !== null, 'an engine whose capacity no scrape can show keeps the safe start limit');
    const failures = logLines.filter((line) => line.includes('scraping engine metrics started failing') && line.includes(silent.url));
    assert.equal(failures.length, 1, 'one line per failure streak, however many scrapes fail');
  });
});

describe('engine metric dialects: named per endpoint', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([{ model: MODEL, metricsDialect: 'tgi' }], ['--scrape-interval-ms', '100', '--scrape-dialect', 'none']);
  });
  after(() => fleet.close());

  it('dialect none never scrapes the engine', async () => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    const [endpoint] = await debugEndpoints(fleet.admin);
    assert.equal(endpoint?.scrape.dialect, 'none');
    assert.equal(endpoint?.scrape.metrics, 'not-scraped');
    assert.equal(endpoint?.scrape.detectedDialect, null);
    assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, chat)).status, 200);
  });
});

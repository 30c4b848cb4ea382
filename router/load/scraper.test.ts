import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { fetchText } from '../../discovery/upstream-body.ts';
import type { EndpointState } from './endpoint-state.ts';
import { LORA_REQUESTS_INFO, loraRequestsInfo, waitsForAdapterSlot } from './extractors/lora-requests-info.ts';
import { LoadView } from './load-view.ts';
import { Scraper, type ScrapeObserver } from './scraper.ts';

const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const GAUGES = [
  '# TYPE vllm:num_requests_running gauge',
  `vllm:num_requests_running{engine="0",model_name="${MODEL}"} 3.0`,
  '# TYPE vllm:num_requests_waiting gauge',
  `vllm:num_requests_waiting{engine="0",model_name="${MODEL}"} 2.0`,
  `vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="${MODEL}"} 0.0`,
  `vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="${MODEL}"} 7.0`,
].join('\n');
const LORA = [
  '# HELP vllm:lora_requests_info Running stats on lora requests.',
  '# TYPE vllm:lora_requests_info gauge',
  'vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql-lora",waiting_lora_adapters="ko-lora,zh-lora"} 1.7886264577368872e+09',
  'vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 1.7886264546318772e+09',
].join('\n');

/** A vLLM stand-in on 127.0.0.1 whose `/metrics` answer the test sets. */
let answer: { status: number; body: string } = { status: 200, body: '' };
let server: Server;
let baseUrl: string;
const agent = new Agent({ connections: 2 });

before(async () => {
  server = createServer((req, res) => {
    assert.equal(req.url, '/metrics');
    res.writeHead(answer.status, { 'content-type': 'text/plain; version=0.0.4' }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await agent.close();
  await new Promise((resolve) => server.close(resolve));
});

/** A scraper over one endpoint of a real load view, reading through the real fetch path, with the LoRA extractor registered. */
function scraperFor(url: string): { state: EndpointState; scrapeOnce: () => Promise<string | undefined> } {
  const view = new LoadView({ maxScrapeAgeMs: 3_000, defaultCapacity: 256, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 0.5 }, queueWaitsElsewhere: waitsForAdapterSlot });
  view.update({ version: 1, endpoints: [{ id: 'e0', url, models: [MODEL], labels: {}, ready: true, draining: false }] });
  const state = [...view.all()][0]!;
  let done: ((error: string | undefined) => void) | undefined;
  const observer: ScrapeObserver = { scraped: (_state, _seconds, error) => done?.(error), failing: () => undefined, recovered: () => undefined };
  const scraper = new Scraper(
    view,
    (base) => fetchText(agent, new URL(`${base}/metrics`), { timeoutMs: 5_000, maxBytes: 1 << 20 }),
    { intervalMs: 60_000, concurrency: 1, dialect: 'auto' },
    observer,
    [loraRequestsInfo],
  );
  // The observer hears of a scrape before the scraper has marked it finished: tick on the next turn.
  const scrapeOnce = (): Promise<string | undefined> =>
    new Promise((resolve) => {
      done = resolve;
      setImmediate(() => scraper.tick());
    });
  return { state, scrapeOnce };
}

describe('scraper with metric extractors', () => {
  it('stores the extractor attribute from a scrape of a real engine endpoint, beside the load gauges', async () => {
    const { state, scrapeOnce } = scraperFor(baseUrl);
    answer = { status: 200, body: `${GAUGES}\n${LORA}\n` };
    assert.equal(await scrapeOnce(), undefined);
    assert.deepEqual(state.attributes.get(LORA_REQUESTS_INFO), { running: ['sql-lora'], waiting: ['ko-lora', 'zh-lora'], maxLora: 2, starts: 1, sentSinceScrape: new Set() });
    assert.deepEqual([state.scraped?.waiting, state.scraped?.running], [2, 3]);
    // The view judged the queue by this scrape's LoRA state (ko and zh wait for a slot): no capacity learned from it.
    assert.equal(state.learnedCapacity, undefined);
  });

  it('keeps the attribute through failed scrapes and clears it on a good scrape without the series', async () => {
    const { state, scrapeOnce } = scraperFor(baseUrl);
    answer = { status: 200, body: `${GAUGES}\n${LORA}\n` };
    assert.equal(await scrapeOnce(), undefined);
    const stored = state.attributes.get(LORA_REQUESTS_INFO);
    assert.notEqual(stored, undefined);

    answer = { status: 500, body: LORA };
    assert.match((await scrapeOnce()) ?? '', /answered 500/);
    assert.equal(state.attributes.get(LORA_REQUESTS_INFO), stored, 'a failed fetch commits nothing');

    answer = { status: 200, body: `${LORA.replace('sql-lora', 'other')}\n` };
    assert.match((await scrapeOnce()) ?? '', /unusable metrics/);
    assert.equal(state.attributes.get(LORA_REQUESTS_INFO), stored, 'an unusable body (no load gauges) commits nothing');

    answer = { status: 200, body: `${GAUGES}\n` };
    assert.equal(await scrapeOnce(), undefined);
    assert.equal(state.attributes.has(LORA_REQUESTS_INFO), false, 'a good scrape without the series clears it');
  });
});

describe('scraper and the safe start', () => {
  it('scrapes an engine soon when its safe-start limit binds, at most once per evidence interval, and leaves the others to the regular rounds', async () => {
    const view = new LoadView({
      maxScrapeAgeMs: 3_000,
      defaultCapacity: 256,
      ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 0.5 },
      safeStart: { enabled: true, initialLimit: 2, queueBudget: 1, ttfbTolerance: 2 },
    });
    // Two engine identities, both served by the stand-in: the fetcher notes each scrape's start per identity.
    view.update({ version: 1, endpoints: ['http://held.engine', 'http://idle.engine'].map((url, i) => ({ id: `e${i}`, url, models: [MODEL], labels: {}, ready: true, draining: false })) });
    const [held, idle] = [...view.all()] as [EndpointState, EndpointState];
    const starts = new Map<string, number[]>();
    answer = { status: 200, body: `vllm:num_requests_running{model_name="${MODEL}"} 2.0\nvllm:num_requests_waiting{model_name="${MODEL}"} 0.0\n` };
    const gapMs = 300;
    // Node's timers keep whole milliseconds on their own clock: one can fire up to 2 ms early by performance.now().
    const timerSlackMs = 2;
    const scraper = new Scraper(
      view,
      (base) => {
        starts.set(base, [...(starts.get(base) ?? []), performance.now()]);
        return fetchText(agent, new URL(`${baseUrl}/metrics`), { timeoutMs: 5_000, maxBytes: 1 << 20 });
      },
      { intervalMs: 60_000, concurrency: 4, dialect: 'auto', evidenceIntervalMs: gapMs },
      { scraped: () => undefined, failing: () => undefined, recovered: () => undefined },
    );
    view.onAwaitsEvidence = (state) => scraper.scrapeSoon(state);
    const count = (url: string) => starts.get(url)?.length ?? 0;
    /** Polls until `done` (a loaded CI host may delay a timer; the regular round is a minute away). */
    const until = async (done: () => boolean) => {
      for (const deadline = Date.now() + 5_000; !done(); ) {
        assert.ok(Date.now() < deadline, 'timed out');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    scraper.start();
    try {
      await until(() => count('http://held.engine') === 1 && count('http://idle.engine') === 1 && held.scraped !== undefined);
      view.begin(held);
      assert.equal(held.awaitsEvidence, false, 'below the limit the traffic, not the limit, holds it back');
      view.begin(held);
      assert.equal(held.awaitsEvidence, true, 'the whole limit of 2 is in use');
      assert.equal(idle.awaitsEvidence, false);
      await until(() => count('http://held.engine') === 2 && !held.awaitsEvidence);
      const [first = 0, second = 0] = starts.get('http://held.engine') ?? [];
      assert.ok(second - first >= gapMs - timerSlackMs, `the evidence scrape waits out the interval since the last start (${(second - first).toFixed(0)} ms)`);

      // The limit binds again at once: the next scrape comes an interval after that one, not sooner.
      view.settle(held, 1);
      view.begin(held);
      assert.equal(held.awaitsEvidence, true);
      await until(() => count('http://held.engine') === 3);
      const [, , third = 0] = starts.get('http://held.engine') ?? [];
      assert.ok(third - second >= gapMs - timerSlackMs, `${(third - second).toFixed(0)} ms`);
      await new Promise((resolve) => setTimeout(resolve, gapMs + 100));
      assert.deepEqual([count('http://held.engine'), count('http://idle.engine')], [3, 1], 'nothing more until the limit binds again');
    } finally {
      scraper.stop();
    }
  });
});

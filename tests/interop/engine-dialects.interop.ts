/**
 * Engine metric dialects: the exposition of each engine release the router
 * claims to read, and each dialect served live through a router.
 *
 * The fixtures (tests/fixtures/engine-metrics/) are composed from the
 * engines' own metric definitions at named releases, not from the
 * simulator, so a name, label or rename the simulator never learned shows
 * here. Each is read twice, detected (`auto`) and with its dialect named,
 * and must give the gauges expected.json states. Live, a router in front
 * of two simulators serving one dialect must see a queue on one of them and
 * route around it; and an engine that answers 404 on `/metrics` must be
 * served on in-flight counts, marked as such.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import type { SimMetricsDialect } from '../../loadtest/sim/metrics-text.ts';
import { scanEngineMetrics, type ModelGauges } from '../../router/load/exposition-scanner.ts';
import { createLogger } from '../../router/log.ts';
import { holdOnEngine, postJson, servedBy, startFleet, waitFor, type Fleet } from '../kit/harness.ts';
import { recordRow } from './compat-rows.ts';

const FILE = 'tests/interop/engine-dialects.interop.ts';
const FIXTURES = new URL('../fixtures/engine-metrics/', import.meta.url);
const ENGINE_NAMES: Record<string, string> = { vllm: 'vLLM', sglang: 'SGLang', llamacpp: 'llama.cpp server', tgi: 'TGI' };

interface Expected {
  readonly dialect: 'vllm' | 'sglang' | 'llamacpp' | 'tgi';
  readonly models: Record<string, { waiting: number; running: number; kvCacheUsage: number | null }>;
}

const expected = JSON.parse(readFileSync(new URL('expected.json', FIXTURES), 'utf8')) as Record<string, Expected>;

/**
 * The release a fixture's `# fixture:` header names, with its commit where the release records
 * one (a full hash, or the short one a vLLM wheel's `_version.py` carries).
 */
function releaseOf(text: string, file: string): string {
  const header = text.split('\n').find((line) => line.startsWith('# fixture:'));
  assert.ok(header, `${file}: no "# fixture:" header naming the release`);
  const release = /(?<![-\w])(v\d+\.\d+\.\d+|b\d{4,})\b/.exec(header)?.[1];
  const commit = /\b([0-9a-f]{40})\b/.exec(header)?.[1]?.slice(0, 10) ?? /commit_id g([0-9a-f]{7,})/.exec(header)?.[1];
  assert.ok(release !== undefined || commit !== undefined, `${file}: the header names neither a release nor a commit`);
  if (release === undefined) return `commit ${commit}`;
  return `${release} (${commit ?? 'tag; the release artefact records no commit'})`;
}

/** What about the exposition is worth a row: the traits that trip scanners. */
function traits(text: string, dialect: string): string {
  const found: string[] = [];
  const engines = new Set([...text.matchAll(/[{,]engine="([^"]*)"/g)].map((m) => m[1]));
  if (engines.size > 1) found.push(`${engines.size} engines (data parallel)`);
  else if (engines.size === 1) found.push('engine label');
  else if (dialect === 'vllm') found.push('no engine label');
  if (/^vllm:gpu_cache_usage_perc[{ ]/m.test(text)) found.push('gpu_cache_usage_perc');
  if (/^vllm:kv_cache_usage_perc[{ ]/m.test(text)) found.push('kv_cache_usage_perc');
  if (/^vllm:num_requests_waiting_by_reason[{ ]/m.test(text)) found.push('num_requests_waiting_by_reason');
  if (/^\w[\w:]*_created[{ ]/m.test(text)) found.push('_created series');
  const dpRanks = new Set([...text.matchAll(/[{,]dp_rank="([^"]*)"/g)].map((m) => m[1]));
  if (dpRanks.size > 1) found.push(`${dpRanks.size} data-parallel ranks`);
  return found.join(', ');
}

function asExpected(models: ReadonlyMap<string, ModelGauges>): Expected['models'] {
  return Object.fromEntries([...models].map(([model, g]) => [model, { waiting: g.waiting, running: g.running, kvCacheUsage: g.kvCacheUsage ?? null }]));
}

describe('engine metric fixtures from upstream releases', () => {
  for (const [file, want] of Object.entries(expected)) {
    it(file, () => {
      const text = readFileSync(new URL(file, FIXTURES), 'utf8');
      const detected = scanEngineMetrics(text);
      assert.ok(detected.ok, `${file}: ${detected.ok ? '' : detected.error}`);
      assert.equal(detected.dialect, want.dialect);
      assert.deepEqual(asExpected(detected.models), want.models);
      const named = scanEngineMetrics(text, want.dialect);
      assert.ok(named.ok);
      assert.deepEqual(asExpected(named.models), want.models);
      const about = traits(text, want.dialect);
      recordRow({
        area: 'engine',
        subject: `${ENGINE_NAMES[want.dialect] ?? want.dialect} metrics`,
        version: releaseOf(text, file),
        exercised: `load gauges from its /metrics (${file}${about === '' ? '' : `: ${about}`}), detected and named`,
        result: `pass: dialect ${want.dialect}, waiting, running and KV usage as the release defines them`,
        test: `${FILE}: ${file}`,
      });
    });
  }
});

const MODEL = 'interop-dialects';
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

describe('each dialect served live through a router', () => {
  const fleets: Fleet[] = [];
  after(() => Promise.all(fleets.map((f) => f.close())));

  for (const dialect of ['vllm', 'sglang', 'llamacpp', 'tgi'] as const) {
    it(`${dialect}: a queue one engine reports is routed around`, async () => {
      const engine = { model: MODEL, metricsDialect: dialect, knobs: { maxSeqs: 2, ttftMs: 5, itlMs: 0, outputTokens: 2 } };
      const fleet = await startFleet([engine, engine], ['--scrape-interval-ms', '100']);
      fleets.push(fleet);
      const [busy, idle] = fleet.engines as [(typeof fleet.engines)[number], (typeof fleet.engines)[number]];
      const hold = holdOnEngine(busy.url, 4, MODEL);
      try {
        await waitFor(() => busy.scheduler.waiting === 2);
        const state = [...fleet.router.view.all()].find((s) => s.endpoint.url === busy.url);
        await waitFor(() => state?.scraped?.waiting === 2 && state.scraped.running === 2);
        const ids = Array.from({ length: 6 }, (_, i) => `${dialect}-${i}`);
        for (const id of ids) assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, chat, { 'x-request-id': id })).status, 200);
        assert.deepEqual(
          ids.map((id) => servedBy(fleet.engines, id)),
          ids.map(() => fleet.engines.indexOf(idle)),
          'every request avoided the engine whose scrape shows a queue',
        );
      } finally {
        await hold.release();
      }
      recordRow({
        area: 'engine',
        subject: `${ENGINE_NAMES[dialect] ?? dialect} metrics`,
        version: 'simulator',
        exercised: `the simulator serving the ${dialect} dialect through a router (scrape.dialect auto)`,
        result: 'pass: dialect detected, a reported queue routed around',
        test: `${FILE}: ${dialect}: a queue one engine reports is routed around`,
      });
    });
  }

  it('an engine without metrics (404 on /metrics) is served on in-flight counts, marked, and logged once', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
    const none: SimMetricsDialect = 'none';
    const fleet = await startFleet([{ model: MODEL, metricsDialect: none, knobs: { maxSeqs: 2, ttftMs: 20, itlMs: 0, outputTokens: 2 } }], ['--scrape-interval-ms', '100'], [], { logger });
    fleets.push(fleet);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const answers = await Promise.all(Array.from({ length: 20 }, () => postJson(`${fleet.base}/v1/chat/completions`, chat)));
    assert.ok(answers.every((a) => a.status === 200 || a.status === 429), answers.map((a) => a.status).join(','));
    assert.ok(answers.some((a) => a.status === 200));
    const doc = (await (await fetch(`${fleet.admin}/debug/endpoints`)).json()) as { endpoints: { scrape: { metrics: string }; load: { safeStart: unknown } }[] };
    assert.equal(doc.endpoints[0]?.scrape.metrics, 'unavailable');
    assert.notEqual(doc.endpoints[0]?.load.safeStart, null);
    assert.equal(lines.filter((l) => l.includes('scraping engine metrics started failing')).length, 1);
    recordRow({
      area: 'engine',
      subject: 'engine without metrics',
      version: 'any (404 on /metrics)',
      exercised: 'served through a router after its scrapes failed for longer than a scrape stays fresh',
      result: "pass: requests served under the safe start's limit, /debug/endpoints says metrics unavailable, one log line",
      test: `${FILE}: an engine without metrics (404 on /metrics) is served on in-flight counts, marked, and logged once`,
    });
  });
});

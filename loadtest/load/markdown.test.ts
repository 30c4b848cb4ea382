import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeResults } from '../bench/generators.ts';
import { Histogram } from '../bench/histogram.ts';
import type { LoadResult } from '../bench/load-spec.ts';
import { PerSecond } from '../bench/per-second.ts';
import { loadCharts } from './charts.ts';
import { renderMarkdown } from './markdown.ts';
import { parseLoadOptions, type LoadOptions } from './options.ts';
import { reportSettings, stepReport, type LoadReport } from './summary.ts';

const histogram = (...values: number[]) => {
  const h = new Histogram();
  for (const v of values) h.record(v);
  return h.snapshot();
};

/** What a generator measured in a 2 s window: `ok` answers of 10 tokens each (asked 10), TTFT 50 ms, and `failed` 503s. */
function measured(ok: number, failed: number): LoadResult {
  const seconds = new PerSecond();
  for (let i = 0; i < ok; i++) seconds.success(1 + (i % 2), 50, [5, 5], 10);
  for (let i = 0; i < failed; i++) seconds.failure(2);
  return {
    measured: ok + failed,
    ok,
    shed: 1,
    failed,
    failureKinds: failed === 0 ? {} : { 'status 503': failed },
    failureExamples: failed === 0 ? [] : [{ requestId: 'load-1-s0-g0-7', status: 503, problem: 'status 503', bodyHead: '{"error":"no engine ready"}' }],
    e2e: histogram(...Array.from({ length: ok }, () => 200)),
    ttft: histogram(...Array.from({ length: ok }, () => 50)),
    itl: histogram(...Array.from({ length: ok * 2 }, () => 5)),
    sendLag: histogram(0.2),
    timeline: [0, Math.ceil(ok / 2), Math.floor(ok / 2)],
    seconds: seconds.snapshot(),
    tokens: { output: histogram(...Array.from({ length: ok }, () => 10)), fromUsage: ok, prompt: histogram(...Array.from({ length: ok }, () => 100)), askedOutput: 10 * ok, askedPrompt: 98 * ok },
    windowMs: 2000,
    cpuShare: 0.1,
    loopDelayP99Ms: 2,
  };
}

function report(options: LoadOptions, results: LoadResult[]): LoadReport {
  return {
    tool: 'switchyard bench load',
    version: '0.0.0-test',
    generatedAt: '2026-01-01T00:00:00.000Z',
    target: options.target.href,
    model: options.model,
    settings: reportSettings(options),
    idsChecked: true,
    steps: results.map((r, i) => stepReport({ load: options.steps[i]!, startedAt: '2026-01-01T00:00:00.000Z', run: mergeResults([r]) }, options)),
  };
}

test('a step report: served, errors by kind, throughput over the window, TTFT, tokens against what was asked, seconds', () => {
  const parsed = parseLoadOptions(['--target', 'http://127.0.0.1:9/', '--model', 'm', '--rates', '10,20', '--api-key-file', '/run/key', '--warmup', '1', '--duration', '2']);
  const options = (parsed as { options: LoadOptions }).options;
  const r = report(options, [measured(20, 0), measured(30, 4)]);
  const [first, second] = r.steps;
  assert.deepEqual(first?.requests, { sent: 20, ok: 20, shed: 1, failed: 0 });
  assert.deepEqual(first?.throughput, { requestsPerS: 10, outputTokensPerS: 100 });
  assert.equal(first?.ttftMs.p50, 50);
  assert.deepEqual([first?.tokens.output.mean, first?.tokens.askedOutputMean, first?.tokens.prompt.mean, first?.tokens.sentPromptMean, first?.tokens.fromUsage], [10, 10, 100, 98, 20]);
  assert.deepEqual(second?.errors, { 'status 503': 4 });
  assert.deepEqual(second?.seconds.map((s) => [s.second, s.ok, s.failed, s.outputTokens]), [[0, 0, 0, 0], [1, 15, 0, 150], [2, 15, 4, 150]]);
  assert.equal(second?.seconds[1]?.ttftP50Ms, 50);
  assert.ok(Number.isNaN(second?.seconds[0]?.ttftP50Ms));
  assert.deepEqual([r.settings['apiKey'], r.settings['target'], 'apiKeyFile' in r.settings], ['sent, from /run/key', 'http://127.0.0.1:9/', false]);

  const charts = loadCharts(r);
  assert.deepEqual(charts.map((c) => c.file), ['ttft.svg', 'itl.svg', 'throughput.svg', 'errors.svg', 'sweep.svg']);
  assert.ok(charts.every((c) => c.svg.startsWith('<svg') && !c.svg.includes('no data')), 'every chart has data');
  assert.match(charts[0]?.svg ?? '', /10 req\/s p50.*20 req\/s p99/s);

  const markdown = renderMarkdown(r, options, charts.map((c) => ({ file: c.file, title: c.title })));
  for (const heading of ['# switchyard bench load', '## Steps', '## Did the generator keep up?', '## Tokens', '## Errors', '## Charts']) assert.ok(markdown.split('\n').includes(heading), heading);
  const rows = markdown.split('\n').filter((line) => /^\| \d+ req\/s \|/.test(line));
  assert.equal(rows.length, 4, 'a row per rate in the steps and the tokens tables');
  assert.match(rows[0] ?? '', /^\| 10 req\/s \| 20 \| 20 \| 0 \| 1 \| 10\.0 \| 100 \| 50 ms \| 50 ms \| 5\.0 ms \| 5\.0 ms \| 200 ms \| 200 ms \| yes \|$/);
  assert.match(markdown, /\*\*20 req\/s\*\*: status 503 × 4/);
  assert.match(markdown, /`load-1-s0-g0-7` \(status 503\)/);
  assert.match(markdown, /!\[Time to first token\]\(ttft\.svg\)/);
  assert.match(markdown, /approximate/);
  assert.doesNotMatch(renderMarkdown(r, options, []), /## Charts/, 'no charts section without an output directory');
});

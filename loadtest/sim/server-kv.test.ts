import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import { EngineSimulator } from './server.ts';

const MODEL = 'kv-sim';
const SYSTEM = Array.from({ length: 1500 }, (_, i) => `t${i} `).join(''); // ~2,000 pseudo-tokens

async function post(pool: Pool, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? null : JSON.stringify(body) });
  return { status: res.statusCode, text: await res.body.text() };
}

async function metrics(pool: Pool): Promise<string> {
  const res = await pool.request({ path: '/metrics', method: 'GET' });
  return res.body.text();
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  assert.ok(line !== undefined, `${name} missing`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** The assistant content of a streamed chat answer, as a client assembles it. */
function streamedContent(sse: string): string {
  let out = '';
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const event = JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] };
    out += event.choices[0]?.delta.content ?? '';
  }
  return out;
}

describe('engine simulator with the KV-block model on (real sockets)', () => {
  // The KV model's clock (the prefill lane, when blocks are computed) moves only when a test moves it.
  let now = 0;
  const engine = new EngineSimulator({ model: MODEL, clock: () => now, knobs: { kvBlocks: 4096, blockTokens: 16, ttftMs: 0, itlMs: 0, outputTokens: 40 } });
  let pool: Pool;
  before(async () => {
    await engine.listen();
    pool = new Pool(engine.url, { connections: 4 });
  });
  after(async () => {
    await pool.close();
    await engine.close();
  });

  it("serves a conversation's next turn from the previous turn's prompt and streamed output", async () => {
    const history = [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Hello?' }];
    const first = await post(pool, '/v1/chat/completions', { model: MODEL, stream: true, messages: history }, { 'x-request-id': 'turn-1' });
    assert.equal(first.status, 200);
    const answer = streamedContent(first.text);
    assert.ok(answer.length > 100);
    const next = { model: MODEL, stream: true, messages: [...history, { role: 'assistant', content: answer }, { role: 'user', content: 'And then?' }] };
    assert.ok(engine.cachedPrefixTokens(next) > 0, 'the oracle question sees it too');
    await post(pool, '/v1/chat/completions', next, { 'x-request-id': 'turn-2' });
    const one = engine.sent('turn-1')?.kv;
    const two = engine.sent('turn-2')?.kv;
    assert.ok(one !== undefined && two !== undefined);
    assert.equal(one.cachedTokens, 0);
    assert.ok(two.cachedTokens > one.promptTokens + 16, `turn 2 reused ${two.cachedTokens} tokens; turn 1's prompt alone was ${one.promptTokens}`);
  });

  it('exports the counters, cache_config_info and kv usage as vLLM does', async () => {
    const text = await metrics(pool);
    const one = engine.sent('turn-1')?.kv;
    const two = engine.sent('turn-2')?.kv;
    assert.ok(one !== undefined && two !== undefined);
    assert.equal(metric(text, 'vllm:prefix_cache_queries_total'), one.promptTokens + two.promptTokens);
    assert.equal(metric(text, 'vllm:prefix_cache_hits_total'), two.cachedTokens);
    assert.equal(metric(text, 'vllm:kv_cache_usage_perc'), 0, 'nothing runs: nothing pinned');
    assert.match(text, /^# TYPE vllm:cache_config_info gauge$/m);
    assert.match(text, /^vllm:cache_config_info\{[^}]*block_size="16"[^}]*enable_prefix_caching="True"[^}]*num_gpu_blocks="4096"[^}]*\} 1\.0$/m);
  });

  it('charges prefill for uncached tokens only (x-sim-prefill-tps), computed, not timed', async () => {
    const body = { model: MODEL, prompt: `${SYSTEM} a completion prompt` };
    const headers = { 'x-sim-prefill-tps': '400000' }; // 2,000 tokens: 5 ms
    now += 1000;
    await post(pool, '/v1/completions', body, { ...headers, 'x-request-id': 'cold' });
    now += 1000; // cold's prefill is over on the model's clock: its blocks are computed, the lane is idle
    await post(pool, '/v1/completions', body, { ...headers, 'x-request-id': 'warm' });
    const cold = engine.sent('cold')?.kv;
    const warm = engine.sent('warm')?.kv;
    assert.ok(cold !== undefined && warm !== undefined);
    // The lane is idle for each, so the delay is exactly the compute time.
    assert.equal(cold.prefillMs, ((cold.promptTokens - cold.cachedTokens) * 1000) / 400_000);
    assert.equal(warm.prefillMs, ((warm.promptTokens - warm.cachedTokens) * 1000) / 400_000);
    assert.ok(warm.prefillMs < cold.prefillMs / 20);
  });

  it('empties the cache on POST /reset_prefix_cache, keeps counting, and counts no request for it', async () => {
    const body = { model: MODEL, prompt: `${SYSTEM} a completion prompt` };
    assert.ok(engine.cachedPrefixTokens(body) > 0);
    const requests = engine.requests;
    const before = metric(await metrics(pool), 'vllm:prefix_cache_queries_total');
    const reset = await post(pool, '/reset_prefix_cache', undefined);
    assert.equal(reset.status, 200);
    assert.equal(engine.requests, requests);
    assert.equal(engine.cachedPrefixTokens(body), 0);
    assert.equal(metric(await metrics(pool), 'vllm:prefix_cache_queries_total'), before);
  });

  it('pins a running request in kv_cache_usage_perc', async () => {
    const controller = new AbortController();
    // The first event comes at once, the next one a minute later: the request is running in between.
    const headers = { 'content-type': 'application/json', 'x-sim-itl-ms': '60000' };
    const response = await pool.request({ path: '/v1/completions', method: 'POST', headers, body: JSON.stringify({ model: MODEL, prompt: SYSTEM, stream: true }), signal: controller.signal });
    assert.ok(metric(await metrics(pool), 'vllm:kv_cache_usage_perc') > 0);
    controller.abort();
    await response.body.text().catch(() => undefined);
  });
});

describe('engine simulator restarts and the model switched off', () => {
  it('a restarted engine on the same port starts its counters from zero', async () => {
    const first = new EngineSimulator({ model: MODEL, knobs: { kvBlocks: 64, ttftMs: 0, itlMs: 0 } });
    const port = await first.listen();
    const pool = new Pool(first.url, { connections: 1 });
    await post(pool, '/v1/completions', { model: MODEL, prompt: SYSTEM });
    assert.ok(metric(await metrics(pool), 'vllm:prefix_cache_queries_total') > 0);
    await first.close();
    const second = new EngineSimulator({ model: MODEL, knobs: { kvBlocks: 64, ttftMs: 0, itlMs: 0 } });
    await second.listen('127.0.0.1', port);
    try {
      assert.equal(metric(await metrics(pool), 'vllm:prefix_cache_queries_total'), 0);
    } finally {
      await pool.close();
      await second.close();
    }
  });

  it('kvBlocks 0 keeps the old exposition: no cache_config_info, the coarse counters still move', async () => {
    const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0 } });
    await engine.listen();
    const pool = new Pool(engine.url, { connections: 1 });
    try {
      const body = { model: MODEL, messages: [{ role: 'user', content: SYSTEM }] };
      await post(pool, '/v1/chat/completions', body, { 'x-request-id': 'off-1' });
      await post(pool, '/v1/chat/completions', body);
      const text = await metrics(pool);
      assert.doesNotMatch(text, /cache_config_info/);
      assert.ok(metric(text, 'vllm:prefix_cache_hits_total') > 0);
      assert.equal(engine.sent('off-1')?.kv, undefined);
      assert.equal(engine.cachedPrefixTokens(body), 0);
    } finally {
      await pool.close();
      await engine.close();
    }
  });
});

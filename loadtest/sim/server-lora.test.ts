import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Pool } from 'undici';
import { closeSimulatedFleet, startSimulatedFleet } from '../scenarios/fleet.ts';
import type { SimKnobs } from './knobs.ts';
import { EngineSimulator } from './server.ts';

const MODEL = 'lora-base';
const LOAD_MS = 300;

/** One engine and a pool to it for the length of `body`. */
async function withEngine(knobs: Partial<SimKnobs>, body: (engine: EngineSimulator, pool: Pool) => Promise<void>): Promise<void> {
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 4, maxSeqs: 8, ...knobs } });
  await engine.listen();
  const pool = new Pool(engine.url, { connections: 16 });
  try {
    await body(engine, pool);
  } finally {
    await pool.close();
    await engine.close();
  }
}

async function chat(pool: Pool, model: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<{ status: number; text: string }> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
  const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: signal ?? null });
  return { status: res.statusCode, text: await res.body.text() };
}

async function get(pool: Pool, path: string): Promise<string> {
  return (await pool.request({ path, method: 'GET' })).body.text();
}

/** A chat request held running for a minute, until `stop` is called (the client leaves). */
function hold(pool: Pool, model: string): { stop: () => Promise<void> } {
  const leave = new AbortController();
  const done = chat(pool, model, { 'x-sim-ttft-ms': '60000' }, leave.signal).catch(() => undefined);
  return {
    stop: async () => {
      leave.abort();
      await done;
    },
  };
}

/** A sample value of an unlabelled or labelled series; NaN when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

/** Every `vllm:lora_requests_info` series: its labels and value. */
function infoSeries(text: string): { labels: Record<string, string>; value: number }[] {
  return [...text.matchAll(/^vllm:lora_requests_info\{([^}]*)\} (\S+)$/gm)].map((m) => ({
    labels: Object.fromEntries([...(m[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1] as string, l[2] as string])),
    value: Number(m[2]),
  }));
}

/** The label set with the greatest value: the engine's state now. */
function currentInfo(text: string): Record<string, string> | undefined {
  return infoSeries(text).reduce<{ labels: Record<string, string>; value: number } | undefined>((best, s) => (best === undefined || s.value > best.value ? s : best), undefined)?.labels;
}

/** Polls the simulator's own state (no network), failing after 5 s. */
async function waitUntil(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('engine simulator with LoRA adapters (real sockets)', () => {
  it('counts a swap and delays that request’s first token by loraLoadMs; an active adapter starts at once', () =>
    withEngine({ loraSlots: 2, loraLoadMs: LOAD_MS, loraAdapters: 'ko,json' }, async (engine, pool) => {
      const first = await chat(pool, 'ko');
      assert.equal(first.status, 200);
      assert.equal((JSON.parse(first.text) as { model: string }).model, 'ko', 'the answer names the adapter, as vLLM does');
      assert.equal((await chat(pool, 'ko')).status, 200);
      assert.equal((await chat(pool, MODEL)).status, 200);
      const [swapped, warm, base] = engine.engineTtftMs;
      assert.ok((swapped ?? 0) >= LOAD_MS - 2, `the swap-in request's first token after ${swapped} ms`);
      assert.ok((warm ?? Infinity) < LOAD_MS, `the next request for the active adapter after ${warm} ms`);
      assert.ok((base ?? Infinity) < LOAD_MS, 'the base model needs no adapter');
      const text = await get(pool, '/metrics');
      assert.equal(sample(text, 'sim:lora_swaps_total'), 1);
      assert.equal(sample(text, 'sim:lora_requests_total{adapter="ko"}'), 2);
      assert.equal(sample(text, 'sim:lora_requests_total{adapter="json"}'), 0);
      assert.ok((engine.lora?.slots.active ?? []).includes('ko'), 'the adapter stays active once idle');
    }));

  it('holds a third adapter back while both active adapters run, without blocking an active one behind it, then swaps it in', () =>
    withEngine({ loraSlots: 2, loraLoadMs: 20, loraAdapters: 'ko,json,sql' }, async (engine, pool) => {
      const ko = hold(pool, 'ko');
      const json = hold(pool, 'json');
      await waitUntil(() => engine.scheduler.running === 2);
      const sql = chat(pool, 'sql');
      await waitUntil(() => engine.scheduler.waiting === 1);

      const busy = await get(pool, '/metrics');
      assert.equal(sample(busy, 'vllm:num_requests_waiting{engine="0",model_name="lora-base"}'), 1, 'it waits as any waiting request');
      assert.deepEqual(currentInfo(busy), { max_lora: '2', waiting_lora_adapters: 'sql', running_lora_adapters: 'ko,json' });
      const lingering = infoSeries(busy);
      assert.ok(lingering.some((s) => s.labels['running_lora_adapters'] === '' && s.labels['waiting_lora_adapters'] === ''), 'the idle label set from start lingers');
      assert.ok(lingering.length >= 3, `earlier label sets stay in the body (${lingering.length})`);

      assert.equal((await chat(pool, 'ko')).status, 200, 'a request for an active adapter is not stuck behind sql');
      assert.equal((await chat(pool, MODEL)).status, 200);
      assert.equal(engine.scheduler.waiting, 1, 'sql still waits');
      assert.deepEqual(engine.lora?.slots.active, ['ko', 'json']);

      await json.stop(); // json goes idle: sql evicts it
      assert.equal((await sql).status, 200);
      assert.deepEqual(engine.lora?.slots.active, ['ko', 'sql']);
      const after = await get(pool, '/metrics');
      assert.equal(sample(after, 'sim:lora_swaps_total'), 3);
      assert.deepEqual(currentInfo(after), { max_lora: '2', waiting_lora_adapters: '', running_lora_adapters: 'ko' });
      assert.notDeepEqual(infoSeries(after).at(-1)?.labels, currentInfo(after), 'a label set seen before keeps its line: the last line is not the current one');
      await ko.stop();
    }));

  it('never has more than loraSlots adapters running under a burst over three adapters', () =>
    withEngine({ loraSlots: 2, loraLoadMs: 5, loraAdapters: 'a,b,c', ttftMs: 2 }, async (engine, pool) => {
      let most = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          most = Math.max(most, (engine.lora?.info.current.running ?? '').split(',').filter(Boolean).length, engine.lora?.slots.active.length ?? 0);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(pool, ['a', 'b', 'c'][i % 3] as string)));
      sampling = false;
      await sampler;
      assert.ok(answers.every((a) => a.status === 200));
      assert.equal(most, 2);
      const text = await get(pool, '/metrics');
      assert.equal(['a', 'b', 'c'].reduce((sum, a) => sum + sample(text, `sim:lora_requests_total{adapter="${a}"}`), 0), 30);
      assert.ok(sample(text, 'sim:lora_swaps_total') >= 3);
    }));

  it('lists each adapter in /v1/models with the base model as parent, and answers 404 to a model it does not serve', () =>
    withEngine({ loraSlots: 1, loraAdapters: 'ko, json,ko' }, async (_engine, pool) => {
      const models = JSON.parse(await get(pool, '/v1/models')) as { data: { id: string; parent: string | null; root: string }[] };
      assert.deepEqual(
        models.data.map((m) => [m.id, m.parent]),
        [
          [MODEL, null],
          ['ko', MODEL],
          ['json', MODEL],
        ],
      );
      assert.equal(models.data[0]?.root, MODEL);
      assert.ok(models.data.slice(1).every((m) => typeof m.root === 'string' && m.root.includes('/')));
      assert.equal((await chat(pool, 'sql')).status, 404);
    }));

  it('with loraSlots 0 exports no LoRA metrics, lists only the base model and treats adapter names as unknown models', () =>
    withEngine({ loraAdapters: 'ko' }, async (engine, pool) => {
      assert.equal(engine.lora, undefined);
      assert.equal((await chat(pool, MODEL)).status, 200);
      assert.equal((await chat(pool, 'ko')).status, 404);
      const text = await get(pool, '/metrics');
      assert.doesNotMatch(text, /^(vllm|sim):lora_/m);
      const models = JSON.parse(await get(pool, '/v1/models')) as { data: { id: string }[] };
      assert.deepEqual(
        models.data.map((m) => m.id),
        [MODEL],
      );
    }));

  it("passes an EngineSpec's LoRA settings through startSimulatedFleet, and leaves LoRA off without them", async () => {
    const spec = { maxSeqs: 2, ttftMs: 0, itlMs: 0, outputTokens: 4 };
    const engines = await startSimulatedFleet(MODEL, [{ name: 'A', ...spec, loraSlots: 2, loraLoadMs: 50, loraAdapters: ['ko', 'json'] }, { name: 'B', ...spec }]);
    try {
      const [lora, plain] = engines;
      assert.deepEqual(lora?.lora?.adapters, ['ko', 'json']);
      assert.equal(lora?.lora?.slots.capacity, 2);
      assert.equal(lora?.lora?.slots.loadMs, 50);
      assert.equal(plain?.lora, undefined);
    } finally {
      await closeSimulatedFleet(engines);
    }
  });
});

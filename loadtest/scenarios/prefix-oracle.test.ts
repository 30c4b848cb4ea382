import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import { waitFor } from '../../tests/kit/harness.ts';
import { EngineSimulator } from '../sim/server.ts';
import { PrefixOracle } from './prefix-oracle.ts';

const MODEL = 'oracle-model';
const SYSTEM = Array.from({ length: 600 }, (_, i) => `s${i} `).join('');
const KNOBS = { kvBlocks: 4096, maxSeqs: 4, ttftMs: 0, itlMs: 0, outputTokens: 24 };

type Message = { role: string; content: string };

async function chat(pool: Pool, messages: Message[], requestId: string): Promise<{ status: number; reply: string; headers: Record<string, unknown>; text: string }> {
  const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': requestId }, body: JSON.stringify({ model: MODEL, messages }) });
  const text = await res.body.text();
  const reply = res.statusCode === 200 ? ((JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]?.message.content ?? '') : '';
  return { status: res.statusCode, reply, headers: res.headers, text };
}

/** Opens a stream that runs for a minute after its first event; resolves once the engine runs it. */
async function hold(pool: Pool, signal: AbortSignal): Promise<void> {
  const res = await pool.request({ path: '/v1/completions', method: 'POST', headers: { 'content-type': 'application/json', 'x-sim-itl-ms': '60000' }, body: JSON.stringify({ model: MODEL, prompt: 'hold', stream: true }), signal });
  res.body.on('error', () => undefined);
}

/** Index of the engine that recorded `requestId`. */
const servedBy = (engines: readonly EngineSimulator[], requestId: string) => engines.findIndex((e) => e.sent(requestId) !== undefined);

describe('prefix oracle (real sockets, in-process simulators)', () => {
  const engines = [1, 2, 3].map((seed) => new EngineSimulator({ model: MODEL, seed, knobs: KNOBS }));
  const oracle = new PrefixOracle({ engines, maxWaiting: 5 });
  let client: Pool;
  const direct: Pool[] = [];
  before(async () => {
    for (const engine of engines) await engine.listen();
    await oracle.listen();
    client = new Pool(oracle.url, { connections: 4 });
    for (const engine of engines) direct.push(new Pool(engine.url, { connections: 8 }));
  });
  after(async () => {
    await client.close();
    await Promise.all(direct.map((pool) => pool.destroy()));
    await oracle.close();
    await Promise.all(engines.map((engine) => engine.close()));
  });

  it('sends a conversation back to the engine that holds it, turn after turn', async () => {
    const history: Message[] = [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'turn 1' }];
    // Turn 1 goes straight to engine 2, which an idle fleet's tie-break would never pick.
    const first = await chat(direct[2] as Pool, history, 'c1-t1');
    history.push({ role: 'assistant', content: first.reply });
    for (let turn = 2; turn <= 4; turn++) {
      history.push({ role: 'user', content: `turn ${turn}` });
      const answer = await chat(client, history, `c1-t${turn}`);
      assert.equal(answer.status, 200);
      assert.equal(servedBy(engines, `c1-t${turn}`), 2, `turn ${turn} left the engine holding the conversation`);
      assert.ok((engines[2]?.sent(`c1-t${turn}`)?.kv?.cachedTokens ?? 0) > 0);
      history.push({ role: 'assistant', content: answer.reply });
    }
    assert.equal(oracle.stats.cacheRouted, 3);
    const fresh = await chat(client, [{ role: 'user', content: 'unrelated' }], 'c2-t1');
    assert.equal(fresh.status, 200);
    assert.equal(servedBy(engines, 'c2-t1'), 0, 'a prompt no engine holds goes to the least loaded (first on ties)');
  });

  it('passes over the holder while it is over the load bound', async () => {
    // Its own system prompt: engine 2 also holds SYSTEM's blocks, and would rightly win on those.
    const history: Message[] = [{ role: 'system', content: `other ${SYSTEM}` }, { role: 'user', content: 'hi' }];
    const first = await chat(direct[1] as Pool, history, 'c3-t1');
    history.push({ role: 'assistant', content: first.reply }, { role: 'user', content: 'more' });
    const busy = new AbortController();
    try {
      // Every batch slot of engine 1 busy: load score 1 against a fleet mean of 1/3.
      for (let i = 0; i < KNOBS.maxSeqs; i++) await hold(direct[1] as Pool, busy.signal);
      const body = { model: MODEL, messages: history };
      assert.ok((engines[1]?.cachedPrefixTokens(body) ?? 0) > 0, 'engine 1 holds the conversation');
      assert.notEqual(oracle.choose(body)?.engine, 1);
      await chat(client, history, 'c3-t2');
      assert.equal(servedBy(engines, 'c3-t2'), 0);
    } finally {
      busy.abort();
    }
  });

  it('streams answers through byte for byte', async () => {
    const res = await client.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'stream-1' }, body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'stream' }] }) });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
    const sent = engines[servedBy(engines, 'stream-1')]?.sent('stream-1');
    assert.equal(createHash('sha256').update(bytes).digest('hex'), sent?.sha256);
  });
});

describe('prefix oracle admission', () => {
  it("sheds with 429 and Retry-After: 1 once every engine's queue reaches maxWaiting", async () => {
    const engines = [1, 2].map((seed) => new EngineSimulator({ model: MODEL, seed, knobs: { ...KNOBS, maxSeqs: 1 } }));
    for (const engine of engines) await engine.listen();
    const oracle = new PrefixOracle({ engines, maxWaiting: 1 });
    await oracle.listen();
    const client = new Pool(oracle.url, { connections: 8 });
    const busy = new AbortController();
    try {
      // One running and one waiting on each engine, all through the oracle.
      for (let i = 0; i < 2; i++) await hold(client, busy.signal);
      const queued = [0, 1].map(() => hold(client, busy.signal).catch(() => undefined));
      await waitFor(() => engines.every((e) => e.scheduler.waiting === 1));
      assert.equal(oracle.choose(undefined), undefined);
      const shed = await chat(client, [{ role: 'user', content: 'one more' }], 'shed-1');
      assert.equal(shed.status, 429);
      assert.equal(shed.headers['retry-after'], '1');
      assert.equal((JSON.parse(shed.text) as { error: { code: string } }).error.code, 'SWITCHYARD_OVERLOADED');
      assert.equal(oracle.stats.shed, 1);
      assert.deepEqual(oracle.stats.routed, [2, 2]);
      busy.abort();
      await Promise.all(queued);
    } finally {
      busy.abort();
      await client.destroy();
      await oracle.close();
      await Promise.all(engines.map((engine) => engine.close()));
    }
  });
});

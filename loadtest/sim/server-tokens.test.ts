import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import { EngineSimulator } from './server.ts';

const MODEL = 'tokens-sim';

interface Chunk {
  choices: { delta?: { content?: string }; text?: string; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

describe('the simulator honours max_tokens and ignore_eos and reports usage', () => {
  let sim: EngineSimulator;
  let pool: Pool;
  before(async () => {
    sim = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 16 } });
    await sim.listen();
    pool = new Pool(sim.url);
  });
  after(async () => {
    await pool.close();
    await sim.close();
  });

  const post = async (path: string, body: Record<string, unknown>): Promise<string> => {
    const res = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, ...body }) });
    assert.equal(res.statusCode, 200);
    return res.body.text();
  };
  const chunks = (text: string): Chunk[] =>
    text
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice('data: '.length)) as Chunk);

  it('streams max_tokens content chunks with ignore_eos, then a usage chunk with no choices when asked', async () => {
    const events = chunks(await post('/v1/chat/completions', { stream: true, max_tokens: 40, ignore_eos: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x'.repeat(400) }] }));
    assert.equal(events.filter((e) => (e.choices[0]?.delta?.content ?? '') !== '').length, 40);
    assert.equal(events.at(-2)?.choices[0]?.finish_reason, 'length');
    const last = events.at(-1);
    assert.deepEqual(last?.choices, []);
    assert.deepEqual(last?.usage, { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140 });
  });

  it('ends on its own under a higher max_tokens without ignore_eos, and sends no usage chunk unasked', async () => {
    const events = chunks(await post('/v1/chat/completions', { stream: true, max_tokens: 40, messages: [{ role: 'user', content: 'hi' }] }));
    assert.equal(events.filter((e) => (e.choices[0]?.delta?.content ?? '') !== '').length, 16);
    assert.equal(events.at(-1)?.choices[0]?.finish_reason, 'stop');
    assert.ok(events.every((e) => e.usage === undefined));
  });

  it('cuts a non-streamed chat answer at max_tokens and a completion too, both with usage', async () => {
    const chat = JSON.parse(await post('/v1/chat/completions', { max_tokens: 3, messages: [{ role: 'user', content: 'abcdefgh' }] })) as { choices: { message: { content: string }; finish_reason: string }[]; usage: Chunk['usage'] };
    assert.equal(chat.choices[0]?.message.content.trim().split(' ').length, 3);
    assert.equal(chat.choices[0]?.finish_reason, 'length');
    assert.deepEqual(chat.usage, { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    const completion = JSON.parse(await post('/v1/completions', { max_tokens: 5, prompt: 'abcd' })) as { usage: Chunk['usage'] };
    assert.deepEqual(completion.usage, { prompt_tokens: 1, completion_tokens: 5, total_tokens: 6 });
  });
});

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import { responseIdIn } from '../../router/request/response-id.ts';
import { generatedText } from './answers.ts';
import { DEFAULT_KNOBS } from './knobs.ts';
import { EngineSimulator } from './server.ts';

const MODEL = 'resp-sim';
const OUTPUT_TOKENS = 6;
const SYSTEM = Array.from({ length: 600 }, (_, i) => `w${i} `).join(''); // ~800 pseudo-tokens
const TEXT = generatedText({ ...DEFAULT_KNOBS, outputTokens: OUTPUT_TOKENS }, undefined, 0);

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

async function post(pool: Pool, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Answer> {
  const res = await pool.request({ path: '/v1/responses', method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }) });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** POSTs on a fresh connection and resolves with the body bytes that arrived, however the response ended. */
function rawPost(url: string, body: unknown, headers: Record<string, string>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('close', () => resolve(Buffer.concat(chunks)));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

interface ResponseObject {
  id: string;
  object: string;
  status: string;
  model: string;
  previous_response_id: string | null;
  output: { type: string; id: string; role: string; status: string; content: { type: string; text: string; annotations: unknown[] }[] }[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; input_tokens_details: { cached_tokens: number } } | null;
}

/** The named events of a Responses API stream: `event:` name and parsed `data:`. */
function events(sse: string): { name: string; data: Record<string, unknown> }[] {
  return sse
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n');
      assert.equal(rest.length, 0, `one event line and one data line: ${block}`);
      assert.ok(eventLine?.startsWith('event: ') === true && dataLine?.startsWith('data: ') === true, block);
      return { name: eventLine.slice(7), data: JSON.parse(dataLine.slice(6)) as Record<string, unknown> };
    });
}

describe('engine simulator Responses API (real sockets)', () => {
  // The KV model's clock only matters for prefill timing, which these tests leave at 0.
  const engine = new EngineSimulator({ model: MODEL, clock: () => 0, storedResponses: 3, knobs: { kvBlocks: 4096, blockTokens: 16, ttftMs: 0, itlMs: 0, outputTokens: OUTPUT_TOKENS, maxSeqs: 1 } });
  let pool: Pool;
  before(async () => {
    await engine.listen();
    pool = new Pool(engine.url, { connections: 8 });
  });
  after(async () => {
    await pool.close();
    await engine.close();
  });

  it('answers a non-streamed request with a completed response object that starts with its id', async () => {
    const answer = await post(pool, { model: MODEL, input: 'Hello?' });
    assert.equal(answer.status, 200);
    assert.match(answer.text, /^\{"id":"resp_[0-9a-f]{32}"/);
    const body = JSON.parse(answer.text) as ResponseObject;
    assert.equal(responseIdIn(Buffer.from(answer.text)), body.id, "the router's id parser finds it");
    assert.equal(body.object, 'response');
    assert.equal(body.status, 'completed');
    assert.equal(body.model, MODEL);
    assert.equal(body.previous_response_id, null);
    assert.equal(body.output.length, 1);
    const [message] = body.output;
    assert.equal(message?.type, 'message');
    assert.equal(message?.role, 'assistant');
    assert.equal(message?.status, 'completed');
    assert.match(message?.id ?? '', /^msg_/);
    assert.deepEqual(message?.content, [{ annotations: [], text: TEXT, type: 'output_text', logprobs: null }]);
    assert.equal(body.usage?.output_tokens, OUTPUT_TOKENS);
    assert.equal(body.usage?.total_tokens, (body.usage?.input_tokens ?? 0) + OUTPUT_TOKENS);
    assert.ok(engine.responses.has(body.id));
  });

  it("streams vLLM's named events in order, numbered, ending with response.completed and no [DONE]", async () => {
    const answer = await post(pool, { model: MODEL, input: 'Stream it', stream: true });
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers['content-type']), /^text\/event-stream/);
    assert.ok(!answer.text.includes('[DONE]'));
    const stream = events(answer.text);
    assert.deepEqual(
      stream.map((e) => e.name),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...Array<string>(OUTPUT_TOKENS).fill('response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    stream.forEach((e, i) => {
      assert.equal(e.data['type'], e.name);
      assert.equal(e.data['sequence_number'], i);
    });
    const created = stream[0]?.data['response'] as ResponseObject;
    const completed = stream.at(-1)?.data['response'] as ResponseObject;
    assert.equal(created.status, 'in_progress');
    assert.deepEqual(created.output, []);
    assert.equal(created.usage, null);
    assert.equal(completed.id, created.id);
    assert.equal(completed.status, 'completed');
    assert.equal(completed.output[0]?.content[0]?.text, TEXT);
    const deltas = stream.filter((e) => e.name === 'response.output_text.delta').map((e) => e.data['delta'] as string);
    assert.equal(deltas.join(''), TEXT);
    assert.equal(responseIdIn(Buffer.from(answer.text)), created.id);
    assert.ok(engine.responses.has(created.id));
  });

  it('sends response.created, id included, before the first token', { timeout: 10_000 }, async () => {
    // A first token a minute away: the first chunk can only be the announcement.
    const first = await new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest(`${engine.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000' }, agent: false }, (res) => {
        res.once('data', (chunk: Buffer) => {
          resolve(chunk);
          req.destroy();
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: MODEL, input: 'slow', stream: true }));
    });
    const id = responseIdIn(first);
    assert.ok(id !== undefined, `no id in ${first.toString('utf8')}`);
    assert.ok(!first.toString('utf8').includes('response.output_text.delta'));
    // Cut short by the client: never stored, so a follow-up cannot name it.
    assert.equal((await post(pool, { model: MODEL, input: 'next', previous_response_id: id })).status, 404);
  });

  it('continues a stored response, streamed or not, with the history in the prompt (prefix cache hits)', async () => {
    const first = JSON.parse((await post(pool, { model: MODEL, instructions: SYSTEM, input: 'Turn one' }, { 'x-request-id': 'r-1' })).text) as ResponseObject;
    const second = await post(pool, { model: MODEL, input: 'Turn two', previous_response_id: first.id, stream: true }, { 'x-request-id': 'r-2' });
    assert.equal(second.status, 200);
    const secondId = (events(second.text)[0]?.data['response'] as ResponseObject).id;
    const third = JSON.parse((await post(pool, { model: MODEL, input: 'Turn three', previous_response_id: secondId }, { 'x-request-id': 'r-3' })).text) as ResponseObject;
    assert.equal(third.previous_response_id, secondId);
    const kv = ['r-1', 'r-2', 'r-3'].map((id) => engine.sent(id)?.kv);
    assert.equal(kv[0]?.cachedTokens, 0);
    // Each turn's prompt holds the whole previous prompt plus its output, so it is cached up to there.
    assert.ok((kv[1]?.cachedTokens ?? 0) >= (kv[0]?.promptTokens ?? Infinity) - 16, `turn 2 cached ${kv[1]?.cachedTokens} of ${kv[1]?.promptTokens}`);
    assert.ok((kv[2]?.cachedTokens ?? 0) >= (kv[1]?.promptTokens ?? Infinity) - 16, `turn 3 cached ${kv[2]?.cachedTokens} of ${kv[2]?.promptTokens}`);
    assert.equal(third.usage?.input_tokens_details.cached_tokens, kv[2]?.cachedTokens);
  });

  it("answers a previous_response_id it does not hold with vLLM's 404, without taking a batch slot", async () => {
    // Hold the only batch slot, then queue one real follow-up behind it.
    const stored = JSON.parse((await post(pool, { model: MODEL, input: 'keep me' })).text) as ResponseObject;
    const release = new AbortController();
    const holder = post(pool, { model: MODEL, input: 'hold' }, { 'x-sim-ttft-ms': '60000' }, release.signal).catch(() => undefined);
    await waitUntil(() => engine.scheduler.running === 1);
    const queued = post(pool, { model: MODEL, input: 'after', previous_response_id: stored.id });
    await waitUntil(() => engine.scheduler.waiting === 1);
    const missing = await post(pool, { model: MODEL, input: 'x', previous_response_id: 'resp_0000' });
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.text), { error: { message: "Response with id 'resp_0000' not found.", type: 'invalid_request_error', param: 'response_id', code: 404 } });
    assert.equal(engine.scheduler.waiting, 1, 'the 404 never queued behind the held slot');
    release.abort();
    await holder;
    assert.equal((await queued).status, 200);
  });

  it('does not keep a response with store: false, nor one cut by a fault, and keeps only the newest storedResponses', async () => {
    const unstored = JSON.parse((await post(pool, { model: MODEL, input: 'x', store: false })).text) as ResponseObject;
    assert.equal((await post(pool, { model: MODEL, input: 'y', previous_response_id: unstored.id })).status, 404);
    // The engine dies after its first write, the announcement: the client saw the id, the engine never stored it.
    const cut = await rawPost(engine.url, { model: MODEL, input: 'x', stream: true }, { 'x-sim-die-after-chunks': '1' });
    const cutId = responseIdIn(cut);
    assert.ok(cutId !== undefined);
    assert.ok(!cut.toString('utf8').includes('response.completed'));
    assert.equal((await post(pool, { model: MODEL, input: 'y', previous_response_id: cutId })).status, 404);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((JSON.parse((await post(pool, { model: MODEL, input: `n${i}` })).text) as ResponseObject).id);
    assert.equal(engine.responses.size, 3);
    assert.equal((await post(pool, { model: MODEL, input: 'z', previous_response_id: ids[0] })).status, 404);
    assert.equal((await post(pool, { model: MODEL, input: 'z', previous_response_id: ids[3] })).status, 200);
  });

  it('refuses a body without input with 400', async () => {
    const answer = await post(pool, { model: MODEL });
    assert.equal(answer.status, 400);
    assert.equal((JSON.parse(answer.text) as { error: { param: string } }).error.param, 'input');
  });
});

/** Polls the simulator's own state (no network), failing after 5 s. */
async function waitUntil(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

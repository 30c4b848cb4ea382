/**
 * Responses API pins end to end: a request naming `previous_response_id`
 * must reach the engine that stored that response, since no other engine
 * holds it (vLLM keeps stored responses in the engine process and answers
 * 404 for an id it does not know). Real router, four real simulated engines,
 * streamed and non-streamed answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EndpointState } from '../../router/load/endpoint-state.ts';
import type { EngineSimulator } from '../../loadtest/sim/server.ts';
import { errorOf, holdOnEngine, postJson, servedBy, startFleet, waitFor, type Fleet, type RawResponse } from '../kit/harness.ts';

const MODEL = 'resp-pin';
const ENGINES = 4;

/** The response id of a 200 answer: the object's `id`, or the `response.created` event's `response.id`. */
function responseIdOf(answer: RawResponse, stream: boolean): string {
  assert.equal(answer.status, 200, `expected 200, got ${answer.status}: ${answer.body.toString('utf8')}`);
  const text = answer.body.toString('utf8');
  if (!stream) return (JSON.parse(text) as { id: string }).id;
  const created = text.split('\n\n')[0] ?? '';
  assert.ok(created.startsWith('event: response.created\n'), created);
  return (JSON.parse(created.slice(created.indexOf('data: ') + 6)) as { response: { id: string } }).response.id;
}

/** The engine that stored response `id`, or -1. */
function storedBy(engines: readonly EngineSimulator[], id: string): number {
  return engines.findIndex((engine) => engine.responses.has(id));
}

async function metric(fleet: Fleet, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${fleet.admin}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) if (pattern.test(line)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

for (const policy of ['auto', 'least-load']) {
  describe(`responses pin under ${policy}`, () => {
    let fleet: Fleet;
    before(async () => {
      const engine = { model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 4, maxSeqs: 64 } };
      fleet = await startFleet(Array.from({ length: ENGINES }, () => engine), ['--routing-policy', policy]);
    });
    after(() => fleet.close());

    it('sends every follow-up to the engine that stored its previous response, streamed or not', async () => {
      const CONVERSATIONS = 12;
      const FOLLOW_UPS = 3;
      const homes = await Promise.all(
        Array.from({ length: CONVERSATIONS }, async (_, c) => {
          const stream = c % 2 === 1;
          const first = `${policy}-c${c}-t0`;
          let id = responseIdOf(await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: `Conversation ${c}: hello`, stream }, { 'x-request-id': first }), stream);
          const home = servedBy(fleet.engines, first);
          assert.equal(storedBy(fleet.engines, id), home);
          for (let t = 1; t <= FOLLOW_UPS; t++) {
            const requestId = `${policy}-c${c}-t${t}`;
            const answer = await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: `and turn ${t}?`, previous_response_id: id, stream }, { 'x-request-id': requestId });
            id = responseIdOf(answer, stream); // 200, never the engine's 404
            assert.equal(servedBy(fleet.engines, requestId), home, `conversation ${c} turn ${t}`);
            assert.equal(storedBy(fleet.engines, id), home);
          }
          return home;
        }),
      );
      // Without the pin, least load picks among idle engines at random: most follow-ups would land elsewhere.
      assert.ok(new Set(homes).size >= 2, `every conversation started on engine ${homes[0]}: nothing shows the pin`);
      const pinned = await metric(fleet, new RegExp(`^switchyard_policy_decisions_total\\{policy="${policy}",outcome="pinned"\\}`));
      assert.equal(pinned, CONVERSATIONS * FOLLOW_UPS);
    });
  });
}

function stateOf(fleet: Fleet, engine: EngineSimulator): EndpointState {
  const state = [...fleet.router.view.all()].find((s) => s.endpoint.url === engine.url);
  assert.ok(state !== undefined, `no endpoint state for ${engine.url}`);
  return state;
}

/** Four one-slot engines; a response stored on one of them; that engine then held full (1 running, 1 waiting) and the router shown so. */
async function saturatedHome(fleet: Fleet): Promise<{ id: string; home: EngineSimulator; hold: { release(): Promise<void> }; before: number[] }> {
  const id = responseIdOf(await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'remember this' }), false);
  const home = fleet.engines[storedBy(fleet.engines, id)] as EngineSimulator;
  const hold = holdOnEngine(home.url, 2, MODEL);
  await waitFor(() => home.scheduler.running === 1 && home.scheduler.waiting === 1);
  // The router calls the engine saturated once a scrape shows its queue.
  await waitFor(() => stateOf(fleet, home).scraped?.waiting === 1);
  return { id, home, hold, before: fleet.engines.map((e) => e.requests) };
}

// One-slot engines, nothing may wait at an engine, scrapes every 100 ms that stay fresh for the whole test.
const SATURATION_FLAGS = ['--routing-policy', 'least-load', '--scrape-interval-ms', '100', '--scrape-max-age-ms', '60000', '--admission-max-waiting', '0', '--admission-queue-length', '0'];
const ONE_SLOT = { model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 4, maxSeqs: 1 } };

describe('responses pin: the pinned engine saturated', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet(Array.from({ length: ENGINES }, () => ONE_SLOT), SATURATION_FLAGS);
  });
  after(() => fleet.close());

  it('sheds the follow-up with 429 rather than sending it to an engine that does not hold the response', async () => {
    const { id, home, hold, before } = await saturatedHome(fleet);
    try {
      const followUp = await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'next', previous_response_id: id });
      assert.equal(followUp.status, 429);
      assert.equal(errorOf(followUp).code, 'SWITCHYARD_OVERLOADED');
      assert.ok(Number(followUp.headers['retry-after']) >= 1);
      assert.deepEqual(
        fleet.engines.map((e) => e.requests),
        before,
        'no engine received the shed follow-up',
      );
      // The other engines have room: a request that names no response is served.
      const fresh = await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'unrelated' }, { 'x-request-id': 'fresh' });
      assert.equal(fresh.status, 200);
      assert.notEqual(servedBy(fleet.engines, 'fresh'), fleet.engines.indexOf(home));
    } finally {
      await hold.release();
    }
    await waitFor(() => stateOf(fleet, home).scraped?.waiting === 0 && stateOf(fleet, home).scraped?.running === 0);
    const retried = await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'next', previous_response_id: id }, { 'x-request-id': 'retried' });
    assert.equal(retried.status, 200);
    assert.equal(servedBy(fleet.engines, 'retried'), fleet.engines.indexOf(home));
  });
});

describe('responses pin: the pinned engine saturated, with a router queue', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet(Array.from({ length: ENGINES }, () => ONE_SLOT), [...SATURATION_FLAGS, '--admission-queue-length', '4', '--admission-queue-max-wait-ms', '20000']);
  });
  after(() => fleet.close());

  it('queues the follow-up in the router until its engine has room, then sends it there', async () => {
    const { id, home, hold, before } = await saturatedHome(fleet);
    let released = false;
    try {
      const followUp = postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'next', previous_response_id: id }, { 'x-request-id': 'queued' });
      await waitFor(() => fleet.router.inFlight === 1);
      assert.equal(await metric(fleet, /^switchyard_queue_length /), 1);
      assert.deepEqual(
        fleet.engines.map((e) => e.requests),
        before,
        'the queued follow-up went nowhere yet',
      );
      await hold.release();
      released = true;
      const answer = await followUp;
      assert.equal(answer.status, 200, answer.body.toString('utf8'));
      assert.equal(servedBy(fleet.engines, 'queued'), fleet.engines.indexOf(home));
    } finally {
      if (!released) await hold.release();
    }
  });
});

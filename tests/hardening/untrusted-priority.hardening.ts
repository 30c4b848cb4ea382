/**
 * The priority header is a claim any client can make. It used to be taken
 * from everyone, so any client could send `x-priority: high` to be shed last
 * and to jump the router queue. It now counts only from a trusted proxy
 * (`server.trustedProxies`); from anyone else the request runs at normal
 * priority. The shed metric's priority label shows which one the router used.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startFleet, waitFor, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-priority';
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const fleets: Fleet[] = [];
after(() => Promise.all(fleets.map((fleet) => fleet.close())));

/** A fleet whose one engine (1 running, 2 waiting) is saturated for `--admission-max-waiting 2`, as the router has scraped it; no router queue, so a saturated request is shed at once. */
async function saturatedFleet(flags: string[]): Promise<Fleet> {
  const fleet = await startFleet([{ model: MODEL, knobs: { maxSeqs: 1, ttftMs: 0, itlMs: 0 } }], ['--scrape-interval-ms', '100', '--admission-max-waiting', '2', '--admission-queue-length', '0', ...flags]);
  fleets.push(fleet);
  const engine = fleet.engines[0] as EngineSimulator;
  const hold = new AbortController();
  for (let i = 0; i < 3; i++) {
    // Held directly on the engine, bypassing the router, until the fleet closes.
    void fetch(`${engine.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sim-ttft-ms': '60000' },
      body: JSON.stringify(chat),
      signal: hold.signal,
    }).catch(() => undefined);
  }
  const closeFleet = fleet.close.bind(fleet);
  fleet.close = async () => {
    hold.abort();
    await closeFleet();
  };
  await waitFor(() => [...fleet.router.view.all()].some((state) => state.scraped?.waiting === 2));
  return fleet;
}

async function shedPriorities(fleet: Fleet): Promise<string[]> {
  const text = await (await fetch(`${fleet.admin}/metrics`)).text();
  return [...text.matchAll(/^switchyard_shed_total\{reason="saturated",priority="(\w+)"\} (\d+)/gm)].map((m) => `${m[1]}=${m[2]}`);
}

test('regression: any client could send x-priority: high and be treated as high priority', async () => {
  // Default configuration: no trusted proxies.
  const fleet = await saturatedFleet([]);
  const response = await postJson(`${fleet.base}/v1/chat/completions`, chat, { 'x-priority': 'high' });
  assert.equal(response.status, 429);
  assert.deepEqual(await shedPriorities(fleet), ['normal=1'], 'the untrusted client\'s header was ignored');
  // A trusted proxy's header still counts; a configured range the client is not in changes nothing.
  const other = await saturatedFleet(['--server-trusted-proxies', '10.0.0.0/8', '--server-trusted-proxies', 'fd00::/8']);
  assert.equal((await postJson(`${other.base}/v1/chat/completions`, chat, { 'x-priority': 'high' })).status, 429);
  assert.deepEqual(await shedPriorities(other), ['normal=1']);
  const trusted = await saturatedFleet(['--server-trusted-proxies', '127.0.0.0/8']);
  assert.equal((await postJson(`${trusted.base}/v1/chat/completions`, chat, { 'x-priority': 'high' })).status, 429);
  assert.deepEqual(await shedPriorities(trusted), ['high=1']);
});

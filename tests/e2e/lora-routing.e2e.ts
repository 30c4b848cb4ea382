/**
 * LoRA-aware routing end to end, the check that found the gap: three engine
 * simulators serve adapters a, b and c; a runs only on the first and b only
 * on the second (long streams hold them there, so each engine's
 * `vllm:lora_requests_info` says so). Concurrent requests for a, then b,
 * through a real router at its default policy go to the engine running their
 * adapter, and the engines swap in no adapter for them. Before the `lora`
 * walk the router spread them by load alone: 18% of a's and 35% of b's on
 * their engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import type { EngineSimulator } from '../../loadtest/sim/server.ts';
import { closeSimulatedFleet, startSimulatedFleet } from '../../loadtest/scenarios/fleet.ts';
import { streamChat } from '../../loadtest/scenarios/sse-client.ts';
import { holdOnEngine, startInProcessRouter, waitFor, type StartedRouter } from '../kit/harness.ts';

const MODEL = 'base';
const ENGINE = { maxSeqs: 64, ttftMs: 5, itlMs: 5, outputTokens: 4, loraSlots: 2, loraLoadMs: 100, loraAdapters: ['a', 'b', 'c'] };

describe('LoRA-aware routing', () => {
  let engines: EngineSimulator[];
  let router: StartedRouter;
  let pool: Pool;
  /** Requests that keep an adapter running on one engine for the whole test. */
  const holders: { release(): Promise<void> }[] = [];

  before(async () => {
    engines = await startSimulatedFleet(MODEL, ['E1', 'E2', 'E3'].map((name) => ({ name, ...ENGINE })));
    holders.push(holdOnEngine(engines[0]!.url, 1, 'a'), holdOnEngine(engines[1]!.url, 1, 'b'));
    await waitFor(() => engines[0]!.lora?.info.current.running === 'a' && engines[1]!.lora?.info.current.running === 'b');
    router = await startInProcessRouter([...engines.flatMap((e) => ['--backend', e.url]), '--scrape-interval-ms', '100'], 3);
    // The adapters' engines as the router's last scrape saw them.
    await waitFor(() => [...router.router.view.all()].every((s) => s.scrapeAgeMs < 1_000) && router.router.view.adapterParent('a') === MODEL);
    await new Promise((resolve) => setTimeout(resolve, 250));
    pool = new Pool(router.base, { connections: 100 });
  });

  after(async () => {
    await pool?.close();
    await router?.router.close();
    await Promise.all(holders.map((held) => held.release()));
    await closeSimulatedFleet(engines ?? []);
  });

  for (const [adapter, home] of [['a', 0], ['b', 1]] as const) {
    it(`sends 100 concurrent requests for adapter ${adapter} to the engine running it, without a swap`, async () => {
      const swapsBefore = engines.map((e) => e.lora?.slots.swaps ?? 0);
      const ids = Array.from({ length: 100 }, (_, i) => `${adapter}-${i}`);
      const outcomes = await Promise.all(ids.map((requestId) => streamChat(pool, { model: adapter, requestId, sessionKey: undefined, turn: 1 })));
      assert.deepEqual(outcomes.filter((o) => o.error !== undefined).map((o) => o.error), []);
      const served = engines.map((engine) => ids.filter((id) => engine.received(id) !== undefined).length);
      assert.ok((served[home] as number) >= 95, `served per engine ${served.join('/')}`);
      assert.deepEqual(engines.map((e, i) => (e.lora?.slots.swaps ?? 0) - (swapsBefore[i] as number)), [0, 0, 0], 'no adapter swapped in');
    });
  }

  it('sends conversations on adapter a (each its own x-session-id) to the engine running it too', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `a-session-${i}`);
    await Promise.all(ids.map((requestId, i) => streamChat(pool, { model: 'a', requestId, sessionKey: `conversation-${i}`, turn: 1 })));
    const served = engines.map((engine) => ids.filter((id) => engine.received(id) !== undefined).length);
    assert.ok((served[0] as number) >= 38, `served per engine ${served.join('/')}`);
  });

  it('leaves requests for the base model to least load: the LoRA walk applies to adapters only', async () => {
    const loraDecisions = async () => {
      const text = await (await fetch(`${router.admin}/metrics`)).text();
      return [...text.matchAll(/^switchyard_policy_decisions_total\{[^}]*outcome="(lora_hit|lora_spill)"[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[2]), 0);
    };
    const before = await loraDecisions();
    assert.ok(before >= 240, `the adapter requests were LoRA decisions: ${before}`);
    const ids = Array.from({ length: 60 }, (_, i) => `base-${i}`);
    await Promise.all(ids.map((requestId) => streamChat(pool, { model: MODEL, requestId, sessionKey: undefined, turn: 1 })));
    assert.equal(await loraDecisions(), before);
    const served = engines.map((engine) => ids.filter((id) => engine.received(id) !== undefined).length);
    assert.ok(served.every((n) => n > 0), `served per engine ${served.join('/')}`);
  });
});

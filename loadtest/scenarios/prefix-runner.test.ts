import assert from 'node:assert/strict';
import { cpus } from 'node:os';
import { describe, it } from 'node:test';
import { Pool } from 'undici';
import { chatTurn } from './chat-turn.ts';
import { PrefixOracle } from './prefix-oracle.ts';
import { closePrefixEngines, FLEET, MODEL, startPrefixEngines } from './prefix-fleet.ts';
import { runRow } from './prefix-runner.ts';
import { turnBody, workload } from './prefix-workloads.ts';

describe('prefix benchmark runner', () => {
  it('reads back the reply the engine generated, so the next turn finds its whole history cached there', async () => {
    const engines = await startPrefixEngines(1);
    const engine = engines[0];
    assert.ok(engine !== undefined);
    const pool = new Pool(engine.url);
    try {
      const script = workload('A', 1).conversation(0);
      const first = await chatTurn(pool, turnBody(MODEL, FLEET.outputTokens, script, 0, []), 'turn-0');
      assert.equal(first.error, undefined);
      assert.ok(first.reply.length > 0 && first.firstDataAt !== undefined);
      const next = JSON.parse(turnBody(MODEL, FLEET.outputTokens, script, 1, [first.reply])) as Record<string, unknown>;
      const previous = JSON.parse(turnBody(MODEL, FLEET.outputTokens, script, 0, [])) as Record<string, unknown>;
      // Everything up to the new question is cached: the first prompt, and the output the engine stored.
      const cached = engine.cachedPrefixTokens(next);
      assert.ok(cached > Buffer.byteLength(JSON.stringify(previous['messages'])) / 4, `${cached} tokens cached`);
      const wrong = JSON.parse(turnBody(MODEL, FLEET.outputTokens, script, 1, [`X${first.reply.slice(1)}`])) as Record<string, unknown>;
      assert.ok(engine.cachedPrefixTokens(wrong) < cached, 'a reply the engine did not write is not in its cache');
    } finally {
      await pool.close();
      await closePrefixEngines(engines);
    }
  });

  it('reports a 429 as shed, not as a reply', async () => {
    const engines = await startPrefixEngines(1);
    // The oracle with no queue room sheds every request, as a router at saturation does.
    const oracle = new PrefixOracle({ engines, maxWaiting: 0 });
    await oracle.listen();
    const pool = new Pool(oracle.url);
    try {
      const outcome = await chatTurn(pool, turnBody(MODEL, 16, workload('D', 1).conversation(0), 0, []), 'shed-1');
      assert.deepEqual([outcome.status, outcome.shed, outcome.reply], [429, true, '']);
      assert.match(outcome.error ?? '', /429/);
    } finally {
      await pool.close();
      await oracle.close();
      await closePrefixEngines(engines);
    }
  });

  it('runs a row end to end through the oracle: every request served and the engines\' counters read', async () => {
    const row = await runRow({
      workload: workload('A', 3),
      router: 'oracle',
      replicas: 1,
      conversationsPerS: 2,
      shedding: false,
      warmupMs: 500,
      durationMs: 1_500,
      drainMs: 10_000,
      seed: 3,
      id: 'test',
    });
    assert.equal(row.unavailable, undefined);
    assert.ok(row.window.sent > 10, `${row.window.sent} sent`);
    assert.deepEqual([row.window.served, row.window.shed, row.window.failed], [row.window.sent, 0, 0]);
    assert.ok(row.queriedTokens > 0 && row.engineRequests > 0 && row.hitTokens <= row.queriedTokens);
    assert.ok(row.running.samples >= 10 && row.running.meanRunning > 0);
    assert.equal(row.coreBusy.length, cpus().length);
    assert.equal(row.routerCpuUsPerRequest, undefined);
  });

  it('says why a router cannot run instead of failing the run', async () => {
    const row = await runRow({
      workload: workload('D', 1),
      router: 'least-load',
      replicas: 1,
      conversationsPerS: 1,
      shedding: false,
      warmupMs: 0,
      durationMs: 0,
      drainMs: 0,
      seed: 1,
      id: 'bad',
      // A switchyard flag that does not exist makes the router exit at start-up.
      routerArgs: ['--no-such-flag', '1'],
    });
    assert.match(row.unavailable ?? '', /no-such-flag/);
  });
});

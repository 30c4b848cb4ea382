/**
 * Warm-up against affinity, at default settings: a fresh router's safe start
 * limits where new work goes, never where a session's work goes. Regression
 * tests for the first two rows of the warm-up issue's table: a fresh router
 * over three idle engines with room to spare moved 161 of 400 session
 * requests off their engine (the safe-start limit counted as saturation), and
 * a second router started separately put 3 of 40 keys elsewhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, servedBy, startInProcessRouter, waitFor, type StartedRouter } from '../kit/harness.ts';

const MODEL = 'warm-model';
const KEYS = 40;
const ROUNDS = 10;

function chat(base: string, id: string, session: string) {
  return postJson(`${base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, { 'x-request-id': id, 'x-session-id': session });
}

async function metric(admin: string, series: string): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('warm-up keeps sessions home (fresh router, default settings, idle engines with room to spare)', () => {
  const engines: EngineSimulator[] = [];
  const routers: StartedRouter[] = [];

  before(async () => {
    // vLLM look-alikes that never queue: every fresh router starts with their capacity unknown.
    for (let i = 0; i < 3; i++) {
      const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 1_000_000, ttftMs: 30, itlMs: 5, outputTokens: 8 } });
      await engine.listen();
      engines.push(engine);
    }
  });
  after(async () => {
    await Promise.all(routers.map((r) => r.router.close()));
    await Promise.all(engines.map((e) => e.close()));
  });

  const start = async () => {
    const started = await startInProcessRouter(engines.flatMap((e) => ['--backend', e.url]), engines.length);
    routers.push(started);
    return started;
  };

  it('moves none of 40 keys x 10 rounds of 40 concurrent requests, and a second fresh router agrees on every key', async () => {
    const first = await start();
    const home = new Map<string, number>();
    let moved = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(Array.from({ length: KEYS }, (_, k) => chat(first.base, `r${round}-k${k}`, `conversation-${k}`)));
      for (const [k, answer] of answers.entries()) {
        assert.equal(answer.status, 200);
        const engine = servedBy(engines, `r${round}-k${k}`);
        const key = `conversation-${k}`;
        if (!home.has(key)) home.set(key, engine);
        else if (home.get(key) !== engine) moved++;
      }
    }
    assert.equal(moved, 0, `${moved} of ${KEYS * ROUNDS} requests moved off their session's engine`);
    // The first round asked more of each engine than the safe start's first limit: its home engine held it back.
    assert.ok((await metric(first.admin, 'switchyard_queued_total{priority="normal"}')) > 0, 'the first round never waited: the test did not reach the safe-start limit');
    assert.equal(new Set(home.values()).size, 3, 'the keys spread over the three engines');

    const second = await start();
    const answers = await Promise.all(Array.from({ length: KEYS }, (_, k) => chat(second.base, `second-k${k}`, `conversation-${k}`)));
    let agreed = 0;
    for (const [k, answer] of answers.entries()) {
      assert.equal(answer.status, 200);
      if (servedBy(engines, `second-k${k}`) === home.get(`conversation-${k}`)) agreed++;
    }
    assert.equal(agreed, KEYS);
  });

  it('lets queued streams go as soon as fast first bytes raise the safe-start limit, not at the first completion (regression: a fresh router held 92 of 100 streams queued for a whole stream)', async () => {
    // One engine with room for all, streams of ~4 s whose first byte comes at once (long enough
    // that a busy 2-core machine still gets all 40 out before the first one ends).
    const engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 1_000_000, ttftMs: 5, itlMs: 200, outputTokens: 20 } });
    await engine.listen();
    // Scrapes far apart, so only a first byte can let the queue go before a stream ends.
    const started = await startInProcessRouter(['--backend', engine.url, '--scrape-interval-ms', '30000'], 1);
    routers.push(started);
    try {
      let completed = 0;
      const streams = Array.from({ length: 40 }, (_, i) =>
        fetch(`${started.base}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': `ramp-${i}` },
          body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        }).then(async (response) => {
          await response.text();
          completed++;
          return response.status;
        }),
      );
      // The first limit (4) is open at once; every stream is at the engine before the first one ends.
      await waitFor(() => engine.requests >= 40 || completed > 0, 10_000);
      assert.equal(completed, 0, `a stream ended before the engine got all 40 (it got ${engine.requests}): queued streams waited for completions`);
      assert.deepEqual(new Set(await Promise.all(streams)), new Set([200]));
    } finally {
      await engine.close();
    }
  });
});

/**
 * A replica joining a warm fleet, at default settings with one real
 * redis-server: it meets its first burst at its share of the fleet's
 * safe-start limits, not at the first limit. Regression test for the
 * warm-up issue's fifth row: the joiner read the fleet's record one sharing
 * round after start-up, and requests it had queued meanwhile waited for
 * its engines' first completions (~500 ms on 0.5 s streams: joiner TTFB
 * p50 8.75x the warm replicas', 1.97x with the safe start off).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { startInProcessRouter, waitFor, waitForSharedStateUp, type StartedRouter } from '../kit/harness.ts';

const MODEL = 'join-model';

interface SafeStartView {
  readonly endpoints: { readonly load: { readonly safeStart: { readonly limit: number; readonly reason: string } | null } }[];
}

async function safeStart(admin: string) {
  const document = (await (await fetch(`${admin}/debug/endpoints`)).json()) as SafeStartView;
  return document.endpoints[0]?.load.safeStart ?? undefined;
}

/** `count` chat requests through `base`, each ~4 s long (streamed: first byte at once); resolves when all ended. */
function requests(base: string, prefix: string, count: number, stream: boolean, ended: { count: number }): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': `${prefix}-${i}` },
        body: JSON.stringify({ model: MODEL, stream, messages: [{ role: 'user', content: 'hi' }] }),
      }).then(async (response) => {
        await response.text();
        ended.count++;
        return response.status;
      }),
    ),
  );
}

describe('a replica joining a warm fleet (one Redis, default settings)', () => {
  let redis: RedisServer;
  let engine: EngineSimulator;
  const routers: StartedRouter[] = [];
  before(async () => {
    redis = await startRedisServer();
    // Room for every stream; ~4 s streams whose first byte comes at once.
    engine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 1_000_000, ttftMs: 5, itlMs: 200, outputTokens: 20 } });
    await engine.listen();
  });
  after(async () => {
    await Promise.all(routers.map((r) => r.router.close()));
    await engine.close();
    await redis.stop();
  });

  // Scrapes far apart: only the fleet's record (or a completion) can raise the joiner's limit in time.
  const flags = () => ['--backend', engine.url, '--redis-url', redis.url, '--redis-command-timeout-ms', '1000', '--scrape-interval-ms', '30000'];

  it("starts at its share of the warm replica's limit and sends its whole burst before the first request ends", async () => {
    const warm = await startInProcessRouter(flags(), 1);
    routers.push(warm);
    await waitForSharedStateUp(warm.admin);
    // The warm replica's limit grows on fast first bytes while 60 streams are open.
    const warming = requests(warm.base, 'warm', 60, true, { count: 0 });
    await waitFor(() => engine.requests >= 60, 10_000);
    const warmLimit = (await safeStart(warm.admin))?.limit ?? 0;
    assert.ok(warmLimit >= 40, `the warm replica's limit grew to ${warmLimit}`);

    const joiner = await startInProcessRouter(flags(), 1);
    routers.push(joiner);
    // Answers that are not streamed raise no limit at their first byte (it is the whole answer): only
    // the fleet's record can let more than the first limit (4) through before the first one ends.
    const joinerEnded = { count: 0 };
    const before = engine.requests;
    const burst = requests(joiner.base, 'join', 20, false, joinerEnded);
    await waitFor(() => engine.requests >= before + 20 || joinerEnded.count > 0, 10_000);
    assert.equal(joinerEnded.count, 0, `a joiner's request ended before the engine had all 20 (it had ${engine.requests - before}): the burst waited for completions`);
    const limit = await safeStart(joiner.admin);
    assert.ok((limit?.limit ?? 0) >= 20, `the joiner's limit is ${limit?.limit} (${limit?.reason}); the warm one's was ${warmLimit}`);
    assert.deepEqual(new Set([...(await burst), ...(await warming)]), new Set([200]));
  });
});

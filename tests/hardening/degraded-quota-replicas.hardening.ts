/**
 * Quotas multiplied on replicas that started while Redis was down: a replica
 * counted the live replicas as 1 until its first successful fleet read, so
 * two replicas started with Redis unreachable each enforced a tenant's whole
 * burst, and admitted 4 of 8 of a burst-2 tenant's requests (3x the limit
 * with the chart's 3 replicas, maxReplicas x under an HPA). With the replica
 * count known (`load.replicas`; the chart sets it under an HPA) a degraded
 * replica divides by it from the start: degraded admits less, never more.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { freePorts } from '../kit/free-ports.ts';
import { postJson, startInProcessRouter, type StartedRouter } from '../kit/harness.ts';

const MODEL = 'm-quota';
const KEY = 'sk-burst-two-5d1c8e';

let dir: string;
let engine: EngineSimulator;
const replicas: StartedRouter[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-degraded-quota-'));
  engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 1 } });
  await engine.listen();
});
after(async () => {
  await Promise.all(replicas.map((r) => r.router.close()));
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Two replicas pointed at a Redis nobody listens on, a burst-2 tenant, 4 requests through each; how many were admitted. */
async function admittedOfEight(extraFlags: readonly string[]): Promise<number> {
  const keys = join(dir, `keys-${replicas.length}.json`);
  // A tiny rate, so the burst alone decides within the test.
  writeFileSync(keys, JSON.stringify({ tenants: { bursty: { requestsPerSecond: 0.01, burst: 2 } }, keys: [{ key: KEY, tenant: 'bursty' }] }));
  const [deadPort] = await freePorts(1);
  const flags = ['--backend', engine.url, '--auth-api-keys-file', keys, '--redis-url', `redis://127.0.0.1:${deadPort}`, ...extraFlags];
  const pair = [await startInProcessRouter(flags, 1), await startInProcessRouter(flags, 1)];
  replicas.push(...pair);
  let admitted = 0;
  for (const replica of pair) {
    for (let i = 0; i < 4; i++) {
      const response = await postJson(`${replica.base}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${KEY}` });
      if (response.status === 200) admitted++;
      else assert.equal(response.status, 429);
    }
  }
  return admitted;
}

test('regression: two replicas started with Redis down admitted 4 of 8 of a burst-2 tenant (each took the whole burst); told their count, they admit at most the burst', async () => {
  assert.ok((await admittedOfEight(['--load-replicas', '2'])) <= 2);
  // Without the count a replica cannot know it is one of two: the old behaviour, kept as the reference.
  assert.equal(await admittedOfEight([]), 4);
});

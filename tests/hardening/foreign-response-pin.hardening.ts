/**
 * vLLM stores Responses API responses without an owner, and the router pins
 * a `previous_response_id` to the engine that stored it. With API keys on,
 * tenant B sending tenant A's response id was routed to A's engine 10 times
 * out of 10 and continued A's stored conversation. A pin now records the
 * tenant whose request created the response; another tenant naming it gets
 * the 404 an unknown id gets, and the request reaches no engine.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { errorOf, postJson, servedBy, startFleet, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-foreign-pin';
const KEY_A = 'sk-tenant-a-5d8e1f0b72';
const KEY_B = 'sk-tenant-b-9c3a6e4d18';
const ENGINES = 4;
let dir: string;
let fleet: Fleet;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-pin-'));
  const keys = join(dir, 'keys.yaml');
  writeFileSync(keys, `tenants:\n  team-a: {}\n  team-b: {}\nkeys:\n  - key: ${KEY_A}\n    tenant: team-a\n  - key: ${KEY_B}\n    tenant: team-b\n`);
  const engine = { model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 4 } };
  fleet = await startFleet(Array.from({ length: ENGINES }, () => engine), ['--auth-api-keys-file', keys, '--routing-policy', 'least-load']);
});
after(async () => {
  await fleet.close();
  rmSync(dir, { recursive: true, force: true });
});

test("regression: tenant B's previous_response_id naming tenant A's response continued A's conversation on A's engine", async () => {
  const asA = { authorization: `Bearer ${KEY_A}` };
  const asB = { authorization: `Bearer ${KEY_B}` };
  const first = await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'my secret plan' }, { ...asA, 'x-request-id': 'pin-a-0' });
  assert.equal(first.status, 200, first.body.toString('utf8'));
  const id = (JSON.parse(first.body.toString('utf8')) as { id: string }).id;
  const home = servedBy(fleet.engines, 'pin-a-0');

  const requestsBefore = fleet.engines.map((engine) => engine.requests);
  for (let i = 0; i < 10; i++) {
    for (const stream of [false, true]) {
      const stolen = await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'what was the plan?', previous_response_id: id, stream }, asB);
      assert.equal(stolen.status, 404, stolen.body.toString('utf8'));
      assert.deepEqual(errorOf(stolen), { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'SWITCHYARD_RESPONSE_NOT_FOUND' });
    }
  }
  assert.deepEqual(fleet.engines.map((engine) => engine.requests), requestsBefore, 'no engine saw the foreign follow-up');

  // The owner's follow-up still reaches the engine that holds the response.
  const own = await postJson(`${fleet.base}/v1/responses`, { model: MODEL, input: 'and next?', previous_response_id: id }, { ...asA, 'x-request-id': 'pin-a-1' });
  assert.equal(own.status, 200, own.body.toString('utf8'));
  assert.equal(servedBy(fleet.engines, 'pin-a-1'), home);
});

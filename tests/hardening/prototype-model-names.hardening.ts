/**
 * Model names come from clients and engines, and any string is a valid one.
 * Names that are keys of Object.prototype (`constructor`, `__proto__`,
 * `toString`, `hasOwnProperty`) used to fail with 500: the per-model policy
 * lookup indexed a plain object and found Object.prototype's function instead
 * of "no entry". Served, they must route; unknown, they get vLLM's 404.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errorOf, postJson, send, servedBy, startFleet, type Fleet } from '../kit/harness.ts';

const SERVED = ['constructor', '__proto__'];
const UNKNOWN = ['toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];

let fleet: Fleet;
before(async () => {
  fleet = await startFleet(SERVED.map((model) => ({ model })));
});
after(() => fleet.close());

test('regression: model names that are Object.prototype keys got 500 instead of being routed or answered 404', async () => {
  for (const [index, model] of SERVED.entries()) {
    const requestId = `proto-${index}`;
    const response = await postJson(`${fleet.base}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, { 'x-request-id': requestId });
    assert.equal(response.status, 200, `${model}: ${response.body.toString()}`);
    assert.equal(servedBy(fleet.engines, requestId), index, `${model} went to the engine that serves it`);
  }
  for (const model of UNKNOWN) {
    const response = await postJson(`${fleet.base}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.status, 404, `${model}: ${response.body.toString()}`);
    assert.deepEqual(errorOf(response), { message: `The model \`${model}\` does not exist.`, type: 'not_found_error', param: 'model', code: 'SWITCHYARD_MODEL_NOT_FOUND' });
  }
  const models = JSON.parse((await send(`${fleet.base}/v1/models`, { method: 'GET' })).body.toString()) as { data: { id: string }[] };
  assert.deepEqual(models.data.map((m) => m.id), [...SERVED].sort());
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SwitchyardError } from '../errors/errors.ts';
import type { PreparedFacts } from './request-hooks.ts';
import { ResponsePinHook } from './response-pin-hook.ts';
import { ResponsePins } from './response-pins.ts';
import { jsonBodyFacts } from './routing-facts.ts';

const LIMITS = { maxDepth: 32, promptPrefixBytes: 0 };

function facts(): PreparedFacts {
  return { model: 'm', stream: false, sessionKey: undefined, legacySessionKey: undefined, bodyBytes: 10, prefix: undefined, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined };
}

/** The body facts of a Responses request continuing `previous` (none when undefined). */
function body(previous?: string) {
  return jsonBodyFacts(Buffer.from(JSON.stringify({ model: 'm', input: 'hi', ...(previous === undefined ? {} : { previous_response_id: previous }) })), LIMITS);
}

const endpoint = (id: string) => ({ id, idHash: 0 });

describe('response pin hook', () => {
  it('pins a follow-up to the engine that stored its response, for the tenant that stored it', () => {
    const pins = new ResponsePins();
    pins.remember('resp_1', 'e1', 'acme');
    const hook = new ResponsePinHook(pins);
    const request = facts();
    assert.equal(hook.prepare(request, body('resp_1'), 'acme'), undefined);
    assert.equal(request.pinnedEndpoint, 'e1');
    const unknown = facts();
    hook.prepare(unknown, body('resp_other'), 'acme');
    assert.equal(unknown.pinnedEndpoint, undefined);
    const fresh = facts();
    hook.prepare(fresh, body(), 'acme');
    assert.equal(fresh.pinnedEndpoint, undefined);
  });

  it("refuses another tenant's response as not found, in vLLM's words", () => {
    const pins = new ResponsePins();
    pins.remember('resp_1', 'e1', 'acme');
    const request = facts();
    assert.throws(
      () => new ResponsePinHook(pins).prepare(request, body('resp_1'), 'globex'),
      (err: unknown) => err instanceof SwitchyardError && err.status === 404 && err.code === 'SWITCHYARD_RESPONSE_NOT_FOUND' && err.message === "Response with id 'resp_1' not found.",
    );
    assert.equal(request.pinnedEndpoint, undefined);
  });

  it('reads only Responses answers', () => {
    const hook = new ResponsePinHook(new ResponsePins());
    assert.equal(hook.readAnswer('/v1/chat/completions', undefined), undefined);
    assert.equal(hook.readAnswer('/v1/completions', 'acme'), undefined);
    assert.ok(hook.readAnswer('/v1/responses', undefined) !== undefined);
  });

  it("learns the answer's response id across chunks, for the engine that sent it and the request's tenant, then wants no more", () => {
    const pins = new ResponsePins();
    const reader = new ResponsePinHook(pins).readAnswer('/v1/responses', 'acme');
    assert.ok(reader !== undefined);
    assert.equal(reader.answerBytes(endpoint('e7'), Buffer.from('{"id":"resp_ab')), true);
    assert.equal(pins.size, 0);
    assert.equal(reader.answerBytes(endpoint('e7'), Buffer.from('c","object":"response"}')), false);
    assert.equal(pins.lookUp('resp_abc', 'acme'), 'e7');
    assert.notEqual(pins.lookUp('resp_abc', undefined), 'e7');
  });

  it('stops reading an answer that names no response within its first bytes', () => {
    const pins = new ResponsePins();
    const reader = new ResponsePinHook(pins).readAnswer('/v1/responses', undefined);
    assert.ok(reader !== undefined);
    assert.equal(reader.answerBytes(endpoint('e1'), Buffer.alloc(5_000, 0x20)), false);
    assert.equal(pins.size, 0);
  });
});

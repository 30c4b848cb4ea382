import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SwitchyardError } from '../errors/errors.ts';
import { SessionNames } from '../state/session-names.ts';
import type { AccessRecord } from './access-log.ts';
import { Classifier } from './classify.ts';
import { PrefixFactsHook } from './prefix-facts-hook.ts';
import { PrefixGroups } from './prefix-groups.ts';
import { RequestHooks, type AnswerReader, type PreparedFacts, type RequestHook } from './request-hooks.ts';
import { spanEnd, type RequestTrace } from './request-trace.ts';
import { ResponsePinHook } from './response-pin-hook.ts';
import { ResponsePins } from './response-pins.ts';
import { jsonBodyFacts } from './routing-facts.ts';
import { SessionAssignmentHook } from './session-assignment-hook.ts';

const LIMITS = { maxDepth: 32, promptPrefixBytes: 64 * 1024 };
const BODY = jsonBodyFacts(Buffer.from('{"model":"m","messages":[{"role":"user","content":"hello"}]}'), LIMITS);
const RECORD: AccessRecord = { requestId: 'r1', route: '/v1/chat/completions', model: 'm', status: 200, durationMs: 1, bytes: 2 };

function facts(): PreparedFacts {
  return { model: 'm', stream: false, sessionKey: undefined, legacySessionKey: undefined, bodyBytes: 10, prefix: undefined, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined };
}

/** A hook named `name` implementing every point, each call written to `calls`; `wait`: its prepare waits a macrotask. */
function recording(name: string, calls: string[], options: { wait?: boolean; reads?: boolean } = {}): RequestHook {
  return {
    prepare: () => {
      calls.push(`${name}.prepare`);
      if (options.wait !== true) return undefined;
      return new Promise<void>((resolve) => setImmediate(() => {
        calls.push(`${name}.prepared`);
        resolve();
      }));
    },
    admitted: () => calls.push(`${name}.admitted`),
    readAnswer: () => (options.reads === true ? { answerBytes: () => (calls.push(`${name}.answerBytes`), false) } : undefined),
    over: () => calls.push(`${name}.over`),
  };
}

describe('request hooks', () => {
  it('run in registration order at every point', () => {
    const calls: string[] = [];
    const hooks = new RequestHooks([recording('a', calls, { reads: true }), { admitted: () => calls.push('b.admitted') }, recording('c', calls, { reads: true })]);
    assert.equal(hooks.prepare(facts(), BODY, undefined), undefined);
    hooks.admitted(facts(), { id: 'e1', idHash: 1 });
    hooks.answerReader('/v1/responses', undefined)?.({ id: 'e1', idHash: 1 }, Buffer.from('x'));
    hooks.over(RECORD, undefined);
    assert.deepEqual(calls, ['a.prepare', 'c.prepare', 'a.admitted', 'b.admitted', 'c.admitted', 'a.answerBytes', 'c.answerBytes', 'a.over', 'c.over']);
  });

  it('run a prepare only once the one before it has settled, and hand back the last waiting hook\'s own promise', async () => {
    const calls: string[] = [];
    const hooks = new RequestHooks([recording('a', calls, { wait: true }), recording('b', calls), recording('c', calls, { wait: true })]);
    const pending = hooks.prepare(facts(), BODY, undefined);
    assert.ok(pending instanceof Promise);
    assert.deepEqual(calls, ['a.prepare']);
    await pending;
    assert.deepEqual(calls, ['a.prepare', 'a.prepared', 'b.prepare', 'c.prepare', 'c.prepared']);

    const last = recording('last', []);
    const waiting = new Promise<void>((resolve) => setImmediate(resolve));
    const only = new RequestHooks([recording('first', []), { ...last, prepare: () => waiting }]);
    assert.equal(only.prepare(facts(), BODY, undefined), waiting);
  });

  it('stop at a hook that refuses the request: later hooks do not run', () => {
    const calls: string[] = [];
    const refusal = new SwitchyardError('SWITCHYARD_RESPONSE_NOT_FOUND', "Response with id 'resp_1' not found.", { param: 'previous_response_id' });
    const hooks = new RequestHooks([recording('a', calls), { prepare: () => { throw refusal; } }, recording('c', calls)]);
    assert.throws(() => hooks.prepare(facts(), BODY, undefined), (err: unknown) => err === refusal);
    assert.deepEqual(calls, ['a.prepare']);
  });

  it('read no answer when no hook reads the route, and give each reader the chunks until it wants no more', () => {
    const calls: string[] = [];
    assert.equal(new RequestHooks([recording('a', calls), { over: () => undefined }]).answerReader('/v1/chat/completions', undefined), undefined);
    const reader = (name: string, wants: number): AnswerReader => {
      let left = wants;
      return { answerBytes: (endpoint, chunk) => (calls.push(`${name} ${endpoint.id} ${chunk.toString()}`), --left > 0) };
    };
    const both = new RequestHooks([{ readAnswer: () => reader('a', 1) }, { readAnswer: () => reader('b', 2) }]).answerReader('/v1/responses', 'acme');
    assert.ok(both !== undefined);
    assert.equal(both({ id: 'e1', idHash: 1 }, Buffer.from('1')), true);
    assert.equal(both({ id: 'e1', idHash: 1 }, Buffer.from('2')), false);
    assert.deepEqual(calls, ['a e1 1', 'b e1 1', 'b e1 2']);
  });

  it('want a record when a hook without wantsRecord or one that wants it is registered, and none without', () => {
    const trace = { recording: false } as RequestTrace;
    assert.equal(new RequestHooks([recording('a', [])]).wantsRecord(trace), true);
    assert.equal(new RequestHooks([{ wantsRecord: (t) => t?.recording === true, over: () => undefined }]).wantsRecord(trace), false);
    assert.equal(new RequestHooks([{ wantsRecord: (t) => t?.recording === true, over: () => undefined }]).wantsRecord({ recording: true } as RequestTrace), true);
    assert.equal(new RequestHooks([{ prepare: () => undefined }]).wantsRecord(trace), false);
  });

  it('await nothing for a request without a session key, a pinned response or a prefix profile', () => {
    const sessions = {
      cached: () => assert.fail('no session to look up'),
      lookUp: () => assert.fail('no session to look up'),
      assign: () => assert.fail('no session to assign'),
    };
    const classifier = new Classifier({ models: { knowsModel: () => true, routableModels: () => ['m'], adapterParent: () => undefined }, sessionHeader: 'x-session-id', sessionFromUser: true, sessionNames: SessionNames.derivedFrom('test'), defaultModel: undefined });
    const hooks = new RequestHooks([
      new ResponsePinHook(new ResponsePins()),
      new PrefixFactsHook({ usesPrefix: () => false, groups: new PrefixGroups(), now: () => 0 }),
      new SessionAssignmentHook(sessions),
    ]);
    const request = classifier.classify({}, BODY, 60, undefined);
    assert.equal(hooks.prepare(request, BODY, undefined), undefined);
    assert.deepEqual(request, { model: 'm', requestedModel: undefined, rewrite: undefined, stream: false, sessionKey: undefined, legacySessionKey: undefined, bodyBytes: 60, loraBaseModel: undefined, prefix: undefined, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined });
    hooks.admitted(request, { id: 'e1', idHash: 1 });
  });

  it("end a request's span with its record, built for a request that reached an engine only when the span records", () => {
    const ended: [AccessRecord, number][] = [];
    const trace = (recording: boolean): RequestTrace => ({ upstreamHeaders: [], recording, stage: () => undefined, end: (record, at) => ended.push([record, at]) });
    const hooks = new RequestHooks([spanEnd]);
    assert.equal(hooks.wantsRecord(trace(false)), false);
    assert.equal(hooks.wantsRecord(undefined), false);
    assert.equal(hooks.wantsRecord(trace(true)), true);
    const before = performance.now();
    hooks.over(RECORD, trace(true));
    assert.equal(ended.length, 1);
    assert.equal(ended[0]?.[0], RECORD);
    assert.ok((ended[0]?.[1] ?? 0) >= before);
    hooks.over(RECORD, undefined);
    assert.equal(ended.length, 1);
  });
});

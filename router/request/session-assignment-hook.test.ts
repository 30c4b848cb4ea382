import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PreparedFacts } from './request-hooks.ts';
import { SessionAssignmentHook, type SessionAssignmentsLookup } from './session-assignment-hook.ts';

/** Facts as the classify stage builds them, with a session name when `sessionKey` is given. */
function facts(sessionKey?: string): PreparedFacts {
  return { model: 'm', stream: false, sessionKey, legacySessionKey: sessionKey === undefined ? undefined : `client-${sessionKey}`, bodyBytes: 10, prefix: undefined, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined };
}

/** Shared assignments that answer `stored` (or `cached` from the replica's copy), recording every call. */
function assignments(stored: string | null | undefined, cached?: string): SessionAssignmentsLookup & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    cached: (name) => {
      calls.push(`cached ${name}`);
      return cached;
    },
    lookUp: (name, legacyKey) => {
      calls.push(`lookUp ${name} ${legacyKey}`);
      return Promise.resolve(stored);
    },
    assign: (name, from, to) => calls.push(`assign ${name} ${from} ${to}`),
  };
}

describe('session assignment hook', () => {
  it('does nothing for a request without a session key: no lookup, no promise', () => {
    const sessions = assignments('e1');
    const request = facts();
    assert.equal(new SessionAssignmentHook(sessions).prepare(request), undefined);
    assert.deepEqual(sessions.calls, []);
    assert.equal(request.assignedEndpoint, undefined);
  });

  it("takes the replica's recent copy without a promise", () => {
    const sessions = assignments('elsewhere', 'e2');
    const request = facts('s1');
    assert.equal(new SessionAssignmentHook(sessions).prepare(request), undefined);
    assert.equal(request.assignedEndpoint, 'e2');
    assert.deepEqual(sessions.calls, ['cached s1']);
  });

  it('reads a copy that names an engine under pressure again from Redis, where another replica may have moved the session', async () => {
    const sessions = assignments('e5', 'e2');
    const request = facts('s1');
    const pending = new SessionAssignmentHook(sessions, (engine) => engine === 'e2').prepare(request);
    assert.ok(pending instanceof Promise, 'not the copy: e2 shows a queue here');
    await pending;
    assert.equal(request.assignedEndpoint, 'e5', 'the engine the session was moved to');
    assert.deepEqual(sessions.calls, ['cached s1', 'lookUp s1 client-s1']);
    const calm = facts('s1');
    assert.equal(new SessionAssignmentHook(sessions, (engine) => engine === 'e9').prepare(calm), undefined, 'a copy naming an engine without a queue is taken as before');
    assert.equal(calm.assignedEndpoint, 'e2');
  });

  it('looks the session up (with the client key for a rolling upgrade) and sets its engine', async () => {
    const sessions = assignments('e3');
    const request = facts('s1');
    const pending = new SessionAssignmentHook(sessions).prepare(request);
    assert.ok(pending instanceof Promise);
    assert.equal(request.assignedEndpoint, undefined);
    await pending;
    assert.equal(request.assignedEndpoint, 'e3');
    assert.equal(request.placeSession, undefined);
    assert.deepEqual(sessions.calls, ['cached s1', 'lookUp s1 client-s1']);
  });

  it('marks a session with none stored to be placed by load, and leaves one Redis did not answer for to hashing', async () => {
    const none = facts('s1');
    await new SessionAssignmentHook(assignments(null)).prepare(none);
    assert.equal(none.placeSession, true);
    assert.equal(none.assignedEndpoint, undefined);
    const unknown = facts('s1');
    await new SessionAssignmentHook(assignments(undefined)).prepare(unknown);
    assert.equal(unknown.placeSession, undefined);
    assert.equal(unknown.assignedEndpoint, undefined);
  });

  it('stores the first engine and a move after admission, and nothing when the session stayed', () => {
    const sessions = assignments(undefined);
    const hook = new SessionAssignmentHook(sessions);
    hook.admitted(facts('s1'), { id: 'e1', idHash: 1 });
    hook.admitted({ ...facts('s2'), assignedEndpoint: 'e1' }, { id: 'e2', idHash: 2 });
    hook.admitted({ ...facts('s3'), assignedEndpoint: 'e1' }, { id: 'e1', idHash: 1 });
    hook.admitted(facts(), { id: 'e1', idHash: 1 });
    assert.deepEqual(sessions.calls, ['assign s1 undefined e1', 'assign s2 e1 e2']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { joinEffect, snapshotSessions, stickiness } from './shared-state-sessions.ts';

const records = (...engines: Record<string, number>[]) => engines.map((counts) => new Map(Object.entries(counts)));

describe('stickiness', () => {
  it('counts a conversation on one engine only when all its requests reached that engine', () => {
    const result = stickiness(records({ a: 3, b: 2 }, { b: 1, c: 4 }, { b: 1 }));
    assert.deepEqual(result, { conversations: 3, onOneEngine: 2, share: 2 / 3, changedEngine: 1, minMoves: 2 });
  });

  it('leaves out conversations with a single request, which cannot move', () => {
    const result = stickiness(records({ a: 1, b: 2 }, { c: 1 }));
    assert.equal(result.conversations, 1);
    assert.equal(result.share, 1);
  });

  it('is NaN without conversations rather than a perfect score', () => {
    assert.ok(Number.isNaN(stickiness(records({}, {})).share));
  });
});

describe('joinEffect', () => {
  it('counts the existing conversations that reached a new engine after the join, and those that went to the joined one', () => {
    const live = records({ a: 1, b: 2, c: 1 }, { d: 2 }, {});
    const before = snapshotSessions(live);
    // after the join: a stays, b moves to engine 1, c moves to the joined engine 2, d sends nothing more, e is new
    (live[0] as Map<string, number>).set('a', 3);
    (live[1] as Map<string, number>).set('b', 1);
    (live[2] as Map<string, number>).set('c', 2).set('e', 5);
    assert.deepEqual(joinEffect(before, live, 2), { existing: 3, moved: 2, movedToJoined: 1 });
  });

  it('takes its snapshot by value: later requests do not leak into it', () => {
    const live = records({ a: 1 });
    const before = snapshotSessions(live);
    (live[0] as Map<string, number>).set('a', 2);
    assert.equal(before[0]?.get('a'), 1);
  });
});

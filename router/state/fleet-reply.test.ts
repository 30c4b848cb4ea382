import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeFleetReply } from './fleet-reply.ts';

describe('decodeFleetReply', () => {
  it('sums the other replicas\' counts per engine, lists every live replica and the models they have queued', () => {
    const read = decodeFleetReply(['r1', ['e1', '2', 'e2', '1'], ['m1', '4', 'm2', '0'], 'me', [], [], 'r2', ['e1', '3'], ['m3', 1]]);
    assert.deepEqual(read?.live, ['r1', 'me', 'r2']);
    assert.deepEqual([...(read?.others ?? [])], [['e1', 5], ['e2', 1]]);
    assert.deepEqual([...(read?.queuedBy ?? [])], [['m1', ['r1']], ['m3', ['r2']]], 'a model with none queued is not hungry');
    assert.deepEqual([...(read?.activeAt ?? [])], [['e1', ['r1', 'r2']], ['e2', ['r1']]], 'who holds requests where');
  });

  it('takes nil, a nil where counts belong, and every other wrong shape for no answer (the crash of issue 36, item 3)', () => {
    for (const reply of [null, undefined, 'OK', 3, ['r1', null], ['r1', null, []], ['r1', [], null], ['r1', []], ['r1', [], [], 'r2'], ['r1', ['e1'], []], ['r1', ['e1', null], []], ['r1', ['e1', '-1'], []], ['r1', ['e1', '1e309'], []], ['r1', [], ['m1', '-1']], ['r1', [], [['m1'], '1']], [null, [], []], ['', [], []], ['r1', [['e1'], '1'], []]]) {
      assert.equal(decodeFleetReply(reply), undefined, JSON.stringify(reply));
    }
  });

  it('refuses replies beyond its limits: ids too long, too many replicas or engines', () => {
    const limits = { maxReplicas: 2, maxEnginesPerReplica: 2, maxEngines: 3, maxIdLength: 8, maxCount: 100 };
    assert.equal(decodeFleetReply(['r'.repeat(9), [], []], limits), undefined);
    assert.equal(decodeFleetReply(['a', [], [], 'b', [], [], 'c', [], []], limits), undefined);
    assert.equal(decodeFleetReply(['a', ['e1', '1', 'e2', '1', 'e3', '1'], []], limits), undefined);
    assert.equal(decodeFleetReply(['a', ['e1', '101'], []], limits), undefined);
    assert.equal(decodeFleetReply(['a', ['e1', '1', 'e2', '1'], [], 'b', ['e3', '1', 'e4', '1'], []], limits), undefined, 'more distinct engines than routing keeps');
    assert.equal(decodeFleetReply(['a', [], ['m1', '1', 'm2', '1'], 'b', [], ['m3', '1', 'm4', '1']], limits), undefined, 'more distinct queued models than routing keeps');
    assert.ok(decodeFleetReply(['a', ['e1', '100'], ['m1', '100'], 'b', [], []], limits) !== undefined);
  });

  it('never throws, whatever the reply', () => {
    const reply = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.string(), fc.integer(), fc.double(), fc.array(tie('value'), { maxLength: 6 })),
    })).value;
    fc.assert(fc.property(reply, (r) => void decodeFleetReply(r)));
  });
});

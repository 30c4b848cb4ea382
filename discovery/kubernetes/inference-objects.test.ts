import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { poolRefName, readObjective, readRewrite } from './inference-objects.ts';

const meta = { name: 'o', namespace: 'ns', creationTimestamp: '2026-12-07T10:00:00Z' };

describe('InferenceObjective and InferenceModelRewrite reading', () => {
  it('reads an objective, with its priority or without', () => {
    assert.deepEqual(readObjective({ metadata: meta, spec: { poolRef: { name: 'p' }, priority: -3 } }, 'p'), { value: { namespace: 'ns', name: 'o', pool: 'p', priority: -3, createdAt: Date.parse(meta.creationTimestamp) } });
    assert.deepEqual(readObjective({ metadata: meta, spec: { poolRef: { name: 'p' } } }, 'p'), { value: { namespace: 'ns', name: 'o', pool: 'p', priority: undefined, createdAt: Date.parse(meta.creationTimestamp) } });
    assert.match((readObjective({ metadata: meta, spec: { priority: 'high' } }, 'p') as { problem: string }).problem, /not an integer/);
  });

  it('takes pool references to InferencePools only', () => {
    assert.deepEqual(poolRefName({ spec: { poolRef: { name: 'p' } } }), { value: 'p' });
    assert.deepEqual(poolRefName({ spec: { poolRef: { name: 'p', group: 'inference.networking.k8s.io', kind: 'InferencePool' } } }), { value: 'p' });
    assert.match((poolRefName({ spec: { poolRef: { name: 'p', group: 'inference.networking.x-k8s.io' } } }) as { problem: string }).problem, /not an InferencePool/);
    assert.match((poolRefName({ spec: {} }) as { problem: string }).problem, /poolRef.name is missing/);
  });

  it('reads a rewrite: exact matches, generic rules, weighted and unweighted targets', () => {
    const read = readRewrite({
      metadata: meta,
      spec: { poolRef: { name: 'p' }, rules: [{ matches: [{ model: { type: 'Exact', value: 'chat' } }], targets: [{ modelRewrite: 'v1', weight: 90 }, { modelRewrite: 'v2', weight: 10 }] }, { targets: [{ modelRewrite: 'any' }] }] },
    });
    assert.deepEqual(read, {
      value: { id: 'ns/o', createdAt: Date.parse(meta.creationTimestamp), rules: [{ matches: ['chat'], targets: [{ model: 'v1', weight: 90 }, { model: 'v2', weight: 10 }] }, { matches: [], targets: [{ model: 'any', weight: undefined }] }] },
    });
  });

  it('answers every bad rewrite shape with why', () => {
    const bad: [unknown, RegExp][] = [
      [{ spec: { rules: [] } }, /no name/],
      [{ metadata: meta, spec: {} }, /rules is empty/],
      [{ metadata: meta, spec: { rules: [{ targets: [] }] } }, /needs 1 to 64 targets/],
      [{ metadata: meta, spec: { rules: [{ matches: [{ model: { type: 'Prefix', value: 'c' } }], targets: [{ modelRewrite: 'x' }] }] } }, /of type Exact/],
      [{ metadata: meta, spec: { rules: [{ targets: [{ weight: 1 }] }] } }, /needs modelRewrite/],
      [{ metadata: meta, spec: { rules: [{ targets: [{ modelRewrite: 'x', weight: 0 }] }] } }, /weight must be/],
      [{ metadata: meta, spec: { rules: [{ matches: 'chat', targets: [{ modelRewrite: 'x' }] }] } }, /matches is not a list/],
    ];
    for (const [object, problem] of bad) {
      const read = readRewrite(object);
      assert.ok('problem' in read && problem.test(read.problem), `${JSON.stringify(object)} → ${JSON.stringify(read)}`);
    }
  });
});

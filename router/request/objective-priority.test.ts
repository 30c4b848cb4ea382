import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Objective } from '../../discovery/kubernetes/inference-objects.ts';
import { ObjectivePriorities } from './objective-priority.ts';

const objective = (name: string, priority: number | undefined, createdAt = 1, namespace = 'ns'): Objective => ({ namespace, name, pool: 'p', priority, createdAt });

describe('InferenceObjective priorities', () => {
  it('maps > 0 to high, 0 and unset to normal, < 0 to low by default', () => {
    const objectives = new ObjectivePriorities({ highPriorityAbove: 0, lowPriorityBelow: 0 });
    objectives.set([objective('critical', 10), objective('standard', 0), objective('unset', undefined), objective('batch', -1)]);
    assert.deepEqual(Object.fromEntries(objectives.classes), { critical: 'high', standard: 'normal', unset: 'normal', batch: 'low' });
    assert.equal(objectives.priorityOf('critical'), 'high');
    assert.equal(objectives.priorityOf(['batch', 'critical']), 'low', 'the first header value counts');
  });

  it('follows configured thresholds', () => {
    const objectives = new ObjectivePriorities({ highPriorityAbove: 100, lowPriorityBelow: -100 });
    assert.deepEqual([101, 100, 0, -100, -101].map((p) => objectives.classOf(p)), ['high', 'normal', 'normal', 'normal', 'low']);
  });

  it('an unknown objective runs at normal and is counted; no header is no objective', () => {
    let unknown = 0;
    const objectives = new ObjectivePriorities({ highPriorityAbove: 0, lowPriorityBelow: 0 }, () => unknown++);
    objectives.set([objective('known', 5)]);
    assert.equal(objectives.priorityOf('nope'), 'normal');
    assert.equal(objectives.priorityOf(undefined), undefined);
    assert.equal(objectives.priorityOf(' '), undefined);
    assert.equal(unknown, 1);
  });

  it('when two pools share an objective name, the older object decides', () => {
    const objectives = new ObjectivePriorities({ highPriorityAbove: 0, lowPriorityBelow: 0 });
    objectives.set([objective('shared', -5, 2_000, 'b'), objective('shared', 5, 1_000, 'a')]);
    assert.equal(objectives.priorityOf('shared'), 'high');
  });
});

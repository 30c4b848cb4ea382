import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { RewriteRules } from '../../discovery/kubernetes/inference-objects.ts';
import { ModelRewrites } from './model-rewrite.ts';

const rules = (id: string, createdAt: number, ...list: RewriteRules['rules']): RewriteRules => ({ id, createdAt, rules: list });
const to = (model: string, weight?: number) => ({ model, weight });

/** A seeded generator, so the keyless draws are the same on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('model rewrites', () => {
  it('leaves a model no rule matches alone', () => {
    const rewrites = new ModelRewrites();
    rewrites.set([], [rules('ns/a', 1, { matches: ['chat'], targets: [to('chat-v1')] })]);
    assert.equal(rewrites.rewrite('other', undefined), undefined);
    assert.deepEqual(rewrites.rewrite('chat', undefined), { model: 'chat-v1', rule: 'ns/a' });
  });

  it('an exact match beats a generic rule, whichever is older or listed first', () => {
    const rewrites = new ModelRewrites();
    rewrites.set([], [rules('ns/generic', 1, { matches: [], targets: [to('fallback')] }), rules('ns/exact', 2, { matches: ['chat'], targets: [to('chat-v2')] })]);
    assert.deepEqual(rewrites.rewrite('chat', 'k'), { model: 'chat-v2', rule: 'ns/exact' });
    assert.deepEqual(rewrites.rewrite('anything', 'k'), { model: 'fallback', rule: 'ns/generic' });
  });

  it('among equal matches the oldest object wins, then the earlier rule; the config file counts as oldest', () => {
    const rewrites = new ModelRewrites();
    const newer = rules('ns/newer', 2_000, { matches: ['chat'], targets: [to('from-newer')] });
    const older = rules('ns/older', 1_000, { matches: ['x'], targets: [to('x1')] }, { matches: ['chat'], targets: [to('from-older')] }, { matches: ['chat'], targets: [to('later-rule')] });
    rewrites.set([], [newer, older]);
    assert.equal(rewrites.rewrite('chat', 'k')?.model, 'from-older');
    rewrites.set([rules('config/c', 0, { matches: ['chat'], targets: [to('from-config')] })], [newer, older]);
    assert.equal(rewrites.rewrite('chat', 'k')?.model, 'from-config');
    assert.deepEqual(rewrites.rules.map((r) => r.id), ['config/c', 'ns/older', 'ns/newer']);
  });

  it('the same creation second is decided by name, not by list order', () => {
    const a = rules('ns/a', 5_000, { matches: ['chat'], targets: [to('from-a')] });
    const b = rules('ns/b', 5_000, { matches: ['chat'], targets: [to('from-b')] });
    const rewrites = new ModelRewrites();
    rewrites.set([], [b, a]);
    assert.equal(rewrites.rewrite('chat', 'k')?.model, 'from-a');
  });

  it('a session key keeps its target across requests', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (key) => {
        const rewrites = new ModelRewrites(seeded(1));
        rewrites.set([], [rules('ns/canary', 1, { matches: ['chat'], targets: [to('stable', 50), to('canary', 50)] })]);
        const first = rewrites.rewrite('chat', key)?.model;
        for (let i = 0; i < 5; i++) assert.equal(rewrites.rewrite('chat', key)?.model, first);
      }),
    );
  });

  it('splits 90/10 within ±2% over 10,000 distinct session keys, and over 10,000 keyless requests', () => {
    const rewrites = new ModelRewrites(seeded(7));
    rewrites.set([], [rules('ns/canary', 1, { matches: ['chat'], targets: [to('stable', 90), to('canary', 10)] })]);
    for (const keyed of [true, false]) {
      let canary = 0;
      for (let i = 0; i < 10_000; i++) if (rewrites.rewrite('chat', keyed ? `user-${i}` : undefined)?.model === 'canary') canary++;
      assert.ok(Math.abs(canary / 10_000 - 0.1) <= 0.02, `${keyed ? 'keyed' : 'keyless'}: canary share ${canary / 10_000}`);
    }
  });

  it('targets without weights share evenly; one without a weight beside weighted ones counts as 1', () => {
    const rewrites = new ModelRewrites(seeded(3));
    rewrites.set([], [rules('ns/even', 1, { matches: ['a'], targets: [to('a1'), to('a2'), to('a3')] }), rules('ns/mixed', 1, { matches: ['b'], targets: [to('b1', 3), to('b2')] })]);
    const counts = new Map<string, number>();
    for (let i = 0; i < 9_000; i++) for (const model of ['a', 'b']) {
      const target = rewrites.rewrite(model, `k${i}`)?.model as string;
      counts.set(target, (counts.get(target) ?? 0) + 1);
    }
    for (const target of ['a1', 'a2', 'a3']) assert.ok(Math.abs((counts.get(target) ?? 0) / 9_000 - 1 / 3) < 0.02, `${target}: ${counts.get(target)}`);
    assert.ok(Math.abs((counts.get('b1') ?? 0) / 9_000 - 0.75) < 0.02, `b1: ${counts.get('b1')}`);
  });

  it('counts each rewrite by rules and target', () => {
    const counted: string[] = [];
    const rewrites = new ModelRewrites(seeded(1), (rule, target) => counted.push(`${rule}>${target}`));
    rewrites.set([], [rules('ns/a', 1, { matches: ['chat'], targets: [to('chat-v1')] })]);
    rewrites.rewrite('chat', undefined);
    rewrites.rewrite('other', undefined);
    assert.deepEqual(counted, ['ns/a>chat-v1']);
  });
});

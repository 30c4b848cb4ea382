import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProfileRegistry, type SchedulingSettings } from './presets.ts';
import { ep, facts, prefixFacts } from '../../../tests/kit/scheduling-fixtures.ts';

const PROTOTYPE_KEYS = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
const settings = (extra: Partial<SchedulingSettings> = {}): SchedulingSettings => ({
  policy: 'least-load',
  modelPolicies: { llama: 'round-robin' },
  profiles: {},
  balanceEpsilon: 0.25,
  powerOfTwoChoices: false,
  prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 },
  ...extra,
});

describe('profile registry', () => {
  const registry = new ProfileRegistry(settings(), Math.random);
  it('uses the per-model profile, else the default', () => {
    assert.equal(registry.forModel('llama').name, 'round-robin');
    assert.equal(registry.forModel('other').name, 'least-load');
  });
  it('resolves model names that are Object.prototype keys to the default profile', () => {
    for (const model of PROTOTYPE_KEYS) assert.equal(registry.forModel(model).name, 'least-load', model);
  });
  it('honours a per-model profile for such a name', () => {
    const named = new ProfileRegistry(settings({ modelPolicies: Object.fromEntries([['constructor', 'round-robin']]) }), Math.random);
    assert.equal(named.forModel('constructor').name, 'round-robin');
    assert.equal(named.forModel('toString').name, 'least-load');
  });
  it('builds named profiles from their settings and knows which use prefix affinity', () => {
    const registry = new ProfileRegistry(
      settings({
        policy: 'chat',
        modelPolicies: {},
        profiles: { chat: { affinity: ['prefix'], picker: 'weighted-max', weights: { load: 1, kvUsage: 0 }, powerOfTwoChoices: false } },
      }),
      Math.random,
    );
    assert.equal(registry.forModel('any').name, 'chat');
    assert.equal(registry.usesPrefix('any'), true);
    const schedule = registry.forModel('any').schedule(facts({ prefix: prefixFacts(1, 2) }), [ep('a'), ep('b')], () => false);
    assert.ok(schedule.kind === 'admit' && schedule.outcome === 'prefix_hit');
    assert.equal(new ProfileRegistry(settings(), Math.random).usesPrefix('any'), false);
  });
  it('the prefix-affinity preset prefers a session key, then the prompt prefix, then least load', () => {
    const profile = new ProfileRegistry(settings({ policy: 'prefix-affinity' }), Math.random).forModel('m');
    const pods = [ep('a'), ep('b'), ep('c')];
    const outcome = (f: ReturnType<typeof facts>) => {
      const schedule = profile.schedule(f, pods, () => false);
      return schedule.kind === 'admit' ? schedule.outcome : schedule.kind;
    };
    assert.equal(outcome(facts({ sessionKey: 'k', prefix: prefixFacts(1, 2) })), 'affinity_hit');
    assert.equal(outcome(facts({ prefix: prefixFacts(1, 2) })), 'prefix_hit');
    assert.equal(outcome(facts({ prefix: prefixFacts(1, 2, { reuse: 0 }) })), 'prefix_fallback');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolicyRegistry, type PolicyName } from './registry.ts';

const PROTOTYPE_KEYS = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];

describe('policy registry', () => {
  const registry = new PolicyRegistry({ policy: 'least-load', modelPolicies: { llama: 'round-robin' }, balanceEpsilon: 0.25, powerOfTwoChoices: false }, Math.random);

  it('uses the per-model policy, else the default', () => {
    assert.equal(registry.forModel('llama').name, 'round-robin');
    assert.equal(registry.forModel('other').name, 'least-load');
  });

  it('resolves model names that are Object.prototype keys to the default policy', () => {
    for (const model of PROTOTYPE_KEYS) assert.equal(registry.forModel(model).name, 'least-load', model);
  });

  it('honours a per-model policy for such a name', () => {
    const modelPolicies: Record<string, PolicyName> = Object.fromEntries([['constructor', 'round-robin' as const]]);
    const named = new PolicyRegistry({ policy: 'least-load', modelPolicies, balanceEpsilon: 0.25, powerOfTwoChoices: false }, Math.random);
    assert.equal(named.forModel('constructor').name, 'round-robin');
    assert.equal(named.forModel('toString').name, 'least-load');
  });
});

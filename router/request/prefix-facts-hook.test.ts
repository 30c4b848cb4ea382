import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prefixKeys } from '../scheduling/prefix-keys.ts';
import { PrefixFactsHook } from './prefix-facts-hook.ts';
import { PrefixGroups } from './prefix-groups.ts';
import type { PreparedFacts } from './request-hooks.ts';
import { jsonBodyFacts, type BodyFacts } from './routing-facts.ts';
import { tenantCacheSalt } from './tenant-cache-salt.ts';

const LIMITS = { maxDepth: 32, promptPrefixBytes: 64 * 1024 };
const SYSTEM = 'You answer questions about the shared handbook. '.repeat(40);

function facts(sessionKey?: string): PreparedFacts {
  return { model: 'm', stream: false, sessionKey, legacySessionKey: sessionKey, bodyBytes: 10, prefix: undefined, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined };
}

/** A chat body opening with the shared system prompt, then `question`. */
function chat(question: string, extra: Record<string, unknown> = {}): BodyFacts {
  return jsonBodyFacts(Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: question }], ...extra })), LIMITS);
}

/** A hook over its own group table at a fixed time; `prefixModels`: the models whose profile uses prefix affinity. */
function hook(prefixModels: readonly string[] = ['m']) {
  const groups = new PrefixGroups();
  return { groups, hook: new PrefixFactsHook({ usesPrefix: (model) => prefixModels.includes(model), groups, now: () => 1_000_000 }) };
}

describe('prefix facts hook', () => {
  it("adds a keyless prompt's prefix keys and its group's reading, without a promise", () => {
    const { hook: prefix } = hook();
    const body = chat('first question?');
    const request = facts();
    assert.equal(prefix.prepare(request, body, undefined), undefined);
    assert.ok(request.prefix !== undefined);
    const expected = prefixKeys('m', undefined, body.promptKind as NonNullable<BodyFacts['promptKind']>, body.promptPrefix as Buffer, body.promptTruncated);
    assert.equal(request.prefix.keys.group, expected.group);
    // A group the table has not seen: no share, no shared prefix.
    assert.equal(request.prefix.share, 0);
    assert.equal(request.prefix.sharedPrefixTokens, 0);
  });

  it('seeds groups by the tenant with API keys, as its engine cache is', () => {
    const { hook: prefix } = hook();
    const body = chat('q');
    const anonymous = facts();
    const tenant = facts();
    prefix.prepare(anonymous, body, undefined);
    prefix.prepare(tenant, body, 'acme');
    const salted = prefixKeys('m', tenantCacheSalt('acme', undefined), body.promptKind as NonNullable<BodyFacts['promptKind']>, body.promptPrefix as Buffer, body.promptTruncated);
    assert.equal(tenant.prefix?.keys.group, salted.group);
    assert.notEqual(tenant.prefix?.keys.group, anonymous.prefix?.keys.group);
  });

  it('adds nothing for a request with a session key, a model whose profile does not use prefixes, or a body without a prompt', () => {
    const { hook: prefix } = hook(['m']);
    const keyed = facts('s1');
    prefix.prepare(keyed, chat('q'), undefined);
    assert.equal(keyed.prefix, undefined);
    const { hook: none } = hook([]);
    const other = facts();
    none.prepare(other, chat('q'), undefined);
    assert.equal(other.prefix, undefined);
    const promptless = facts();
    prefix.prepare(promptless, jsonBodyFacts(Buffer.from('{"model":"m"}'), LIMITS), undefined);
    assert.equal(promptless.prefix, undefined);
  });

  it("records an admitted request's group, so the next request of the group reads its share", () => {
    const { hook: prefix, groups } = hook();
    const first = facts();
    prefix.prepare(first, chat('the same question?'), undefined);
    assert.equal(first.prefix?.share, 0);
    assert.equal(first.prefix?.placedOn, undefined);
    prefix.admitted(first, { id: 'e1', idHash: 7 });
    assert.equal(groups.stats().groups, 1);
    const second = facts();
    prefix.prepare(second, chat('the same question?'), undefined);
    assert.equal(second.prefix?.keys.group, first.prefix?.keys.group);
    assert.ok((second.prefix?.share ?? 0) > 0);
    assert.equal(second.prefix?.placedOn, 7, 'the engine the group went to last');
    // A request without prefix facts records nothing.
    prefix.admitted(facts('s1'), { id: 'e1', idHash: 7 });
    assert.equal(groups.stats().groups, 1);
  });
});

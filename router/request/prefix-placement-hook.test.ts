import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashString } from '../load/hash.ts';
import type { PrefixFacts } from '../scheduling/candidate.ts';
import type { PrefixKeys } from '../scheduling/prefix-keys.ts';
import { PROVISIONAL_TTL_MS, PrefixPlacementHook, type PlacementRule, type PrefixPlacementsLookup } from './prefix-placement-hook.ts';
import type { PreparedFacts } from './request-hooks.ts';

const GROUP = 0x1234abcd;
const NAME = GROUP.toString(36);

function keys(historyTokens: number, blockCount = 20): PrefixKeys {
  return { conversation: 7, group: GROUP, historyTokens, openingTokens: 0, blockCount, blocks: new Uint32Array(64) };
}

function prefix(overrides: Partial<PrefixFacts> = {}): PrefixFacts {
  return { keys: keys(0), share: 0.01, sharedPrefixTokens: 0, reuse: 0.8, placedOn: undefined, ...overrides };
}

function facts(p: PrefixFacts | undefined): PreparedFacts {
  return { model: 'm', stream: true, sessionKey: undefined, bodyBytes: 10, prefix: p, pinnedEndpoint: undefined, assignedEndpoint: undefined, placeSession: undefined };
}

/** Placements that answer `stored` (or `cached`, the replica's copy), recording every call. */
function placements(stored: string | null | undefined, cached?: string): PrefixPlacementsLookup & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    cached: (name) => {
      calls.push(`cached ${name}`);
      return cached;
    },
    lookUp: (name) => {
      calls.push(`lookUp ${name}`);
      return Promise.resolve(stored);
    },
    assign: (name, from, to, provisionalTtlMs) => calls.push(`assign ${name} ${from} ${to}${provisionalTtlMs === undefined ? '' : ` ${provisionalTtlMs}`}`),
  };
}

/** routing.prefix defaults over 8 engines: a group is rare up to 1/16 of the traffic. */
const RULE: PlacementRule = { isRare: (_model, share) => Math.ceil(2 * 8 * share) <= 1 };

describe('prefix placement hook', () => {
  it('looks nothing up for a prompt whose placement the prefix walk does not follow', () => {
    const cases: [string, PrefixFacts | undefined][] = [
      ['no prefix facts (a session key, or a profile without prefix affinity)', undefined],
      ['a later turn: its history goes by its own hash', prefix({ keys: keys(900) })],
      ['a group shared by a large part of the traffic: spread over several engines', prefix({ share: 0.2 })],
    ];
    for (const [why, p] of cases) {
      const store = placements('e1', 'e1');
      const request = facts(p);
      assert.equal(new PrefixPlacementHook(store, RULE).prepare(request), undefined, why);
      assert.deepEqual(store.calls, [], why);
      assert.equal(request.prefix, p, why);
    }
  });

  it("follows the replica's recent copy without a promise", () => {
    const store = placements('elsewhere', 'e2');
    const request = facts(prefix());
    assert.equal(new PrefixPlacementHook(store, RULE).prepare(request), undefined);
    assert.deepEqual(store.calls, [`cached ${NAME}`]);
    assert.equal(request.prefix?.placedOn, hashString('e2'));
    assert.equal(request.prefix?.fleetPlacement, 'e2');
  });

  it('looks a new group up, and follows where another replica placed it', async () => {
    const store = placements('e3');
    const request = facts(prefix({ share: 0 }));
    await new PrefixPlacementHook(store, RULE).prepare(request);
    assert.deepEqual(store.calls, [`cached ${NAME}`, `lookUp ${NAME}`]);
    assert.equal(request.prefix?.placedOn, hashString('e3'));
  });

  it('stores a first placement and a move, and nothing when the request went where the fleet placed it', async () => {
    const none = placements(null);
    const first = facts(prefix());
    await new PrefixPlacementHook(none, RULE).prepare(first);
    assert.equal(first.prefix?.fleetPlacement, null);
    assert.equal(first.prefix?.placedOn, undefined, "none stored: the replica's own placement decides");
    new PrefixPlacementHook(none, RULE).admitted(first, { id: 'e4', idHash: hashString('e4') });
    assert.deepEqual(none.calls.at(-1), `assign ${NAME} undefined e4 ${PROVISIONAL_TTL_MS}`, 'a first placement is provisional: it may never be asked for');

    const placed = placements('e4');
    const again = facts(prefix());
    await new PrefixPlacementHook(placed, RULE).prepare(again);
    new PrefixPlacementHook(placed, RULE).admitted(again, { id: 'e4', idHash: hashString('e4') });
    assert.equal(placed.calls.filter((c) => c.startsWith('assign')).length, 0, 'it went where the fleet placed it');
    new PrefixPlacementHook(placed, RULE).admitted(again, { id: 'e5', idHash: hashString('e5') });
    assert.equal(placed.calls.at(-1), `assign ${NAME} e4 e5`, 'a spill moves the placement, keeping its TTL: the group follows its last request');
    const lowReuse = facts(prefix({ share: 0, reuse: 0.05 }));
    await new PrefixPlacementHook(placed, RULE).prepare(lowReuse);
    new PrefixPlacementHook(placed, RULE).admitted(lowReuse, { id: 'e7', idHash: hashString('e7') });
    assert.equal(placed.calls.at(-1), `assign ${NAME} e4 e7`, 'whatever the traffic shows, a move of a stored placement is not provisional');
    const keyed = placements(null);
    new PrefixPlacementHook(keyed, RULE).admitted(facts(undefined), { id: 'e1', idHash: 1 });
    assert.deepEqual(keyed.calls, [], 'no prefix facts: nothing to store');
  });

  it('looks up a new group of traffic without reuse too (a shared document seen first looks like that)', async () => {
    const store = placements('e6');
    const request = facts(prefix({ share: 0, reuse: 0.05 }));
    await new PrefixPlacementHook(store, RULE).prepare(request);
    assert.equal(request.prefix?.placedOn, hashString('e6'));
  });

  it('stores nothing and keeps the replica\'s own placement while Redis does not answer', async () => {
    const store = placements(undefined);
    const own = prefix({ placedOn: 42 });
    const request = facts(own);
    await new PrefixPlacementHook(store, RULE).prepare(request);
    assert.equal(request.prefix, own);
    new PrefixPlacementHook(store, RULE).admitted(request, { id: 'e1', idHash: 1 });
    assert.equal(store.calls.filter((c) => c.startsWith('assign')).length, 0);
  });
});

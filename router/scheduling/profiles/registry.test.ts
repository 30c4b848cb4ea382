import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../../config/load.ts';
import type { Candidate, RequestFacts } from '../candidate.ts';
import { BALANCE_FLOOR } from '../load-bound.ts';
import type { PickContext, Picker } from '../pick.ts';
import type { ScorerPlugin } from '../plugin.ts';
import { BoundedWalkPicker } from '../pickers/bounded-walk.ts';
import { RoundRobinPicker } from '../pickers/round-robin.ts';
import { WeightedMaxPicker } from '../pickers/weighted-max.ts';
import { kvUsageScorer } from '../scorers/kv-usage.ts';
import { loadScoreScorer } from '../scorers/load-score.ts';
import { PrefixAffinityScorer } from '../scorers/prefix-affinity.ts';
import { SessionRendezvousScorer } from '../scorers/session-rendezvous.ts';
import { ep, facts, prefixFacts, seeded } from '../../../tests/kit/scheduling-fixtures.ts';
import { pluginReference } from './plugin-reference.ts';
import { builtInPlugins } from './plugins.ts';
import { PRESETS, ProfileRegistry, profilesCheck, scorerRefsOf, type ProfileSettings, type SchedulingSettings } from './presets.ts';
import { SchedulingProfile } from './profile.ts';

const settings = (extra: Partial<SchedulingSettings> = {}): SchedulingSettings => ({
  policy: 'least-load',
  modelPolicies: {},
  profiles: {},
  balanceEpsilon: 0.25,
  powerOfTwoChoices: false,
  prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 },
  ...extra,
});
const profile = (extra: Partial<ProfileSettings> = {}): ProfileSettings => ({ affinity: [], picker: 'weighted-max', powerOfTwoChoices: false, ...extra });

/** The pickers as presets.ts built them before profiles named plugins: the reference for "no behaviour change". */
function pickersBefore(p: { affinity: readonly string[]; picker: string; weights: { load: number; kvUsage: number }; powerOfTwoChoices: boolean }, s: SchedulingSettings, random: () => number): Picker[] {
  const walks = p.affinity.map((kind) =>
    kind === 'session'
      ? new BoundedWalkPicker(new SessionRendezvousScorer(), { epsilon: s.balanceEpsilon, kappa: 0, floor: BALANCE_FLOOR })
      : new BoundedWalkPicker(new PrefixAffinityScorer({ spread: s.prefix.spread, minReuse: s.prefix.minReuse, fullCreditTokens: 8_192 }), { epsilon: s.prefix.epsilon, kappa: s.prefix.kappa, floor: BALANCE_FLOOR, creditFloorOnly: true }),
  );
  const scorers = [
    { scorer: loadScoreScorer, weight: p.weights.load },
    { scorer: kvUsageScorer, weight: p.weights.kvUsage },
  ];
  return [...walks, p.picker === 'round-robin' ? new RoundRobinPicker() : new WeightedMaxPicker(scorers, random, { sampleTwo: p.powerOfTwoChoices })];
}

/** Loads chosen so the weights and the bounds matter: kv usage outweighs a small load gap only at a large weight, and h sits between 1.25 and 1.5 x the mean. */
const FLEET = [ep('a', 0.2), ep('b', 0.2, { kvCacheUsage: 0.5 }), ep('c', 0.9), ep('d', 0, { kvCacheUsage: 0.9 }), ep('e', 0, { kvCacheUsage: 0.1 }), ep('f', 1.5), ep('g', 0.1), ep('h', 0.65)];
/** A mix of requests: no key, a session key, prompts with history or a shared group, and traffic without reuse. */
function request(i: number): RequestFacts {
  switch (i % 4) {
    case 0:
      return facts();
    case 1:
      return facts({ sessionKey: `s${i}` });
    case 2:
      return facts({ prefix: prefixFacts(i, i % 3, { share: 0.3, historyTokens: i * 100 }) });
    default:
      return facts({ prefix: prefixFacts(i, 7, { reuse: 0 }) });
  }
}
function picks(profile: SchedulingProfile): string[] {
  return Array.from({ length: 200 }, (_, i) => {
    const schedule = profile.schedule(request(i), FLEET, (c) => c.id === 'f');
    return schedule.kind === 'admit' ? `${schedule.outcome}:${schedule.attempts.map((c) => c.id).join(',')}` : schedule.kind;
  });
}

describe('plugin registry', () => {
  const plugins = builtInPlugins();

  it('knows the built-in scorers and affinity walks by name', () => {
    assert.deepEqual(plugins.scorers.map((plugin) => plugin.name), ['kv-usage', 'load-score']);
    assert.deepEqual(plugins.affinities.map((plugin) => plugin.name), ['lora', 'prefix', 'session']);
    assert.throws(() => builtInPlugins().registerScorer({ name: 'kv-usage', description: 'a second kv-usage', parameters: z.strictObject({}), create: () => kvUsageScorer }), /scorer kv-usage is registered twice/);
  });

  it('refuses an unknown scorer or walk, naming the profile, the plugin and the known names', () => {
    assert.deepEqual(plugins.check('chat', [{ name: 'load-score', weight: 1 }, { name: 'latency', weight: 1 }], ['session', 'sticky']), [
      { path: ['scorers', 1, 'name'], message: 'profile chat: unknown scorer latency; known: kv-usage, load-score' },
      { path: ['affinity', 1], message: 'profile chat: unknown affinity walk sticky; known: lora, prefix, session' },
    ]);
    assert.throws(() => new ProfileRegistry(settings({ profiles: { chat: profile({ scorers: [{ name: 'latency', weight: 1 }] }) } }), seeded(1)), {
      message: 'profile chat: unknown scorer latency; known: kv-usage, load-score',
    });
  });

  it("refuses bad parameters against the plugin's own schema", () => {
    const issues = plugins.check('chat', [{ name: 'kv-usage', weight: 1, parameters: { bits: 4 } }], [{ name: 'prefix', parameters: { spread: 0.5 } }, { name: 'session', parameters: { epsilon: 0.1 } }]);
    assert.equal(issues.length, 2);
    assert.deepEqual(issues[0]?.path, ['scorers', 0, 'parameters']);
    assert.match(issues[0]?.message ?? '', /^profile chat: scorer kv-usage: bad parameters \(.*bits/);
    assert.deepEqual(issues[1]?.path, ['affinity', 0, 'parameters']);
    assert.match(issues[1]?.message ?? '', /^profile chat: affinity walk prefix: bad parameters \(spread: .*>=1/);
  });

  it('refuses a profile that gives both scorers and the older weights', () => {
    const both = profile({ scorers: [{ name: 'load-score', weight: 1 }], weights: { load: 1, kvUsage: 0 } });
    assert.throws(() => scorerRefsOf('chat', both), { message: 'profile chat: give scorers or weights, not both' });
    assert.throws(() => new ProfileRegistry(settings({ profiles: { chat: both } }), seeded(1)), /give scorers or weights, not both/);
  });

  it('maps the older weights form to the same two scorers, and no form to least-load', () => {
    assert.deepEqual(scorerRefsOf('p', profile({ weights: { load: 2, kvUsage: 0.5 } })), [
      { name: 'load-score', weight: 2 },
      { name: 'kv-usage', weight: 0.5 },
    ]);
    assert.deepEqual(scorerRefsOf('p', profile()), PRESETS['least-load']?.scorers);
  });

  it('builds every preset and an older-form profile to the same picks as before on a fixed fleet with a seeded random', () => {
    const older = { 'cache-first': { affinity: ['prefix'], picker: 'weighted-max', weights: { load: 1, kvUsage: 1 }, powerOfTwoChoices: false } as const, 'two-choices': { affinity: ['session'], picker: 'weighted-max', weights: { load: 1, kvUsage: 0.5 }, powerOfTwoChoices: true } as const };
    const presetsBefore = (s: SchedulingSettings) => ({
      'least-load': { affinity: [], picker: 'weighted-max', weights: { load: 1, kvUsage: 0.001 }, powerOfTwoChoices: s.powerOfTwoChoices },
      session: { affinity: ['session'], picker: 'weighted-max', weights: { load: 1, kvUsage: 0.001 }, powerOfTwoChoices: s.powerOfTwoChoices },
      // `auto` became prefix affinity's chain; `session` keeps the old default's picks.
      auto: { affinity: ['session', 'prefix'], picker: 'weighted-max', weights: { load: 1, kvUsage: 0.001 }, powerOfTwoChoices: s.powerOfTwoChoices },
      'round-robin': { affinity: [], picker: 'round-robin', weights: { load: 1, kvUsage: 0.001 }, powerOfTwoChoices: s.powerOfTwoChoices },
      'prefix-affinity': { affinity: ['session', 'prefix'], picker: 'weighted-max', weights: { load: 1, kvUsage: 0.001 }, powerOfTwoChoices: s.powerOfTwoChoices },
      ...older,
    });
    for (const powerOfTwoChoices of [false, true]) {
      const s = settings({ powerOfTwoChoices, profiles: older });
      const before = presetsBefore(s);
      assert.deepEqual(Object.keys(PRESETS).sort(), Object.keys(before).filter((name) => !(name in older)).sort());
      for (const [name, old] of Object.entries(before)) {
        const expected = picks(new SchedulingProfile(name, pickersBefore(old, s, seeded(7))));
        const actual = picks(new ProfileRegistry({ ...s, policy: name }, seeded(7)).forModel('m'));
        assert.deepEqual(actual, expected, `${name}, powerOfTwoChoices ${powerOfTwoChoices}`);
      }
    }
  });

  it('lets an affinity walk take parameters that override the routing-wide ones', () => {
    // The home at 0.9 with the rest idle: over the floor, so only a wide enough epsilon keeps it.
    const key = facts({ sessionKey: 'k' });
    const home = new ProfileRegistry(settings({ policy: 'session' }), seeded(1)).forModel('m').schedule(key, [ep('x'), ep('y'), ep('z')], () => false);
    assert.ok(home.kind === 'admit');
    const homeId = home.attempts[0]?.id;
    const busy = ['x', 'y', 'z'].map((id) => ep(id, id === homeId ? 0.9 : 0.1));
    const outcome = (affinity: ProfileSettings['affinity']) => {
      const schedule = new ProfileRegistry(settings({ policy: 'p', profiles: { p: profile({ affinity }) } }), seeded(1)).forModel('m').schedule(key, busy, () => false);
      return schedule.kind === 'admit' ? schedule.outcome : schedule.kind;
    };
    assert.equal(outcome(['session']), 'affinity_spill');
    assert.equal(outcome([{ name: 'session', parameters: { epsilon: 2 } }]), 'affinity_hit');
  });
});

describe('a scorer added through the registry', () => {
  /** Prefers the endpoint whose id sorts first (or last): a toy that ignores load. */
  const idOrder: ScorerPlugin<{ last: boolean }> = {
    name: 'id-order',
    description: 'The endpoint whose id sorts first (or last).',
    parameters: z.strictObject({ last: z.boolean().default(false).describe('Prefer the id that sorts last.') }),
    create: ({ last }) => ({
      name: 'id-order',
      rate<T extends Candidate>(context: PickContext<T>, out: Float64Array): void {
        const ids = Array.from({ length: context.n }, (_, i) => (context.candidates[context.pool[i] as number] as T).id);
        const sorted = [...ids].sort();
        for (let i = 0; i < context.n; i++) {
          const rank = sorted.indexOf(ids[i] as string);
          out[i] = 1 - (last ? context.n - 1 - rank : rank) / context.n;
        }
      },
    }),
  };
  const plugins = builtInPlugins().registerScorer(idOrder);
  const fleet = [ep('c', 0), ep('a', 0.8), ep('b', 0.4)];
  const first = (p: ProfileSettings) => {
    const schedule = new ProfileRegistry(settings({ policy: 'p', profiles: { p } }), seeded(3), plugins).forModel('m').schedule(facts(), fleet, () => false);
    return schedule.kind === 'admit' ? schedule.attempts[0]?.id : schedule.kind;
  };

  it('changes the pick when a profile names it, with its parameters', () => {
    assert.equal(first(profile()), 'c');
    assert.equal(first(profile({ scorers: [{ name: 'id-order', weight: 1 }] })), 'a');
    assert.equal(first(profile({ scorers: [{ name: 'id-order', weight: 1, parameters: { last: true } }] })), 'c');
    assert.equal(first(profile({ scorers: [{ name: 'load-score', weight: 1 }, { name: 'id-order', weight: 0.1 }] })), 'c');
  });

  it('documents itself in the configuration reference: its row, its description and parameters, no list kept by hand', () => {
    const lines = pluginReference(plugins);
    assert.ok(lines.includes('| `id-order` | The endpoint whose id sorts first (or last). | `last`: Prefer the id that sorts last. |'), lines.join('\n'));
    assert.ok(!pluginReference(builtInPlugins()).some((line) => line.includes('id-order')));
  });

  it('is checked at config load like a built-in one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-registry-'));
    const load = (yaml: string, check = profilesCheck(plugins)) => {
      const file = join(dir, 'c.yaml');
      writeFileSync(file, yaml);
      return loadConfig(['--config', file], {}, [check]);
    };
    const good = load('routing:\n  policy: p\n  profiles:\n    p:\n      scorers: [{name: id-order, weight: 1, parameters: {last: true}}]\n');
    assert.ok(good.kind === 'config');
    assert.throws(() => load('routing:\n  profiles:\n    p:\n      scorers: [{name: id-order, weight: 1}]\n', profilesCheck()), {
      message: 'invalid configuration: routing.profiles.p.scorers.0.name: profile p: unknown scorer id-order; known: kv-usage, load-score',
    });
    assert.throws(
      () => load('routing:\n  profiles:\n    p:\n      scorers: [{name: id-order, weight: 1, parameters: {last: 3}}]\n'),
      (err: unknown) => err instanceof ConfigError && /^invalid configuration: routing\.profiles\.p\.scorers\.0\.parameters: profile p: scorer id-order: bad parameters \(last: /.test(err.message),
    );
    assert.throws(() => load('routing:\n  profiles:\n    p:\n      scorers: [{name: load-score, weight: 1}]\n      weights: {load: 1}\n'), {
      message: 'invalid configuration: routing.profiles.p.weights: give scorers or weights, not both (weights is the older form of scorers)',
    });
  });
});

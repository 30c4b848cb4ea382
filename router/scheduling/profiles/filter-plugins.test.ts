import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../../config/load.ts';
import type { FilterPlugin } from '../plugin.ts';
import { ep, facts, seeded } from '../../../tests/kit/scheduling-fixtures.ts';
import { pluginReference } from './plugin-reference.ts';
import { builtInPlugins } from './plugins.ts';
import { ProfileRegistry, profilesCheck, type ProfileSettings } from './presets.ts';

/** A toy filter: refuses the endpoints whose ids it is given. */
const refuseIds: FilterPlugin<{ ids: string[] }> = {
  name: 'refuse-ids',
  description: 'Refuses the endpoints whose ids are listed.',
  parameters: z.strictObject({ ids: z.array(z.string()).default([]).describe('Endpoint ids to refuse.') }),
  create: ({ ids }) => ({ name: 'refuse-ids', keeps: (_facts, candidate) => !ids.includes(candidate.id) }),
};
const plugins = builtInPlugins().registerFilter(refuseIds);

/** c is the least loaded, then b, then a. */
const FLEET = [ep('c', 0), ep('a', 0.8), ep('b', 0.4)];
const SETTINGS = { policy: 'p', modelPolicies: {}, balanceEpsilon: 0.25, powerOfTwoChoices: false, prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 } };

function scheduled(p: Omit<ProfileSettings, 'powerOfTwoChoices'>, request = facts()) {
  const registry = new ProfileRegistry({ ...SETTINGS, profiles: { p: { powerOfTwoChoices: false, ...p } } }, seeded(3), plugins);
  return registry.forModel('m').schedule(request, FLEET, () => false);
}
const target = (schedule: ReturnType<typeof scheduled>) => (schedule.kind === 'admit' ? schedule.attempts[0]?.id : schedule.kind);

describe('a filter added through the registry', () => {
  const leastLoad = { affinity: [], picker: 'weighted-max' } as const;

  it('narrows the candidates when a profile names it, with its parameters', () => {
    assert.equal(target(scheduled(leastLoad)), 'c');
    assert.equal(target(scheduled({ ...leastLoad, filters: [{ name: 'refuse-ids', parameters: { ids: ['c'] } }] })), 'b');
    assert.equal(target(scheduled({ ...leastLoad, filters: [{ name: 'refuse-ids', parameters: { ids: ['c', 'b'] } }] })), 'a');
    assert.equal(target(scheduled({ ...leastLoad, filters: ['refuse-ids'] })), 'c', 'no ids: keeps everyone');
  });

  it('is passed over when it would keep no candidate: a filter prefers, it never refuses', () => {
    assert.equal(target(scheduled({ ...leastLoad, filters: [{ name: 'refuse-ids', parameters: { ids: ['a', 'b', 'c'] } }] })), 'c');
  });

  it('moves a session off an assigned engine it refuses, counted as filtered', () => {
    const schedule = scheduled({ ...leastLoad, affinity: ['session'], filters: [{ name: 'refuse-ids', parameters: { ids: ['a'] } }] }, facts({ sessionKey: 's', assignedEndpoint: 'a' }));
    assert.equal(schedule.kind === 'admit' ? schedule.moved : schedule.kind, 'filtered');
    assert.notEqual(target(schedule), 'a');
    const kept = scheduled({ ...leastLoad, affinity: ['session'] }, facts({ sessionKey: 's', assignedEndpoint: 'a' }));
    assert.deepEqual(kept.kind === 'admit' ? [kept.attempts[0]?.id, kept.outcome] : kept.kind, ['a', 'assigned']);
  });

  it('is checked at config load, and documents itself in the configuration reference', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'switchyard-filters-')), 'c.json');
    const load = (profile: unknown) => {
      writeFileSync(file, JSON.stringify({ routing: { policy: 'p', profiles: { p: profile } } }));
      return loadConfig(['--config', file], {}, [profilesCheck(plugins)]);
    };
    assert.equal(load({ filters: [{ name: 'refuse-ids', parameters: { ids: ['x'] } }] }).kind, 'config');
    assert.throws(() => load({ filters: ['refuse-everything'] }), (err: unknown) => err instanceof ConfigError && /routing\.profiles\.p\.filters\.0: profile p: unknown filter refuse-everything; known: refuse-ids/.test(err.message));
    assert.throws(() => load({ filters: [{ name: 'refuse-ids', parameters: { ids: 3 } }] }), (err: unknown) => err instanceof ConfigError && /routing\.profiles\.p\.filters\.0\.parameters: profile p: filter refuse-ids: bad parameters/.test(err.message));
    const lines = pluginReference(plugins);
    assert.ok(lines.includes('| `refuse-ids` | Refuses the endpoints whose ids are listed. | `ids`: Endpoint ids to refuse. |'), lines.join('\n'));
    assert.ok(pluginReference(builtInPlugins()).includes('None is built in yet.'));
  });
});

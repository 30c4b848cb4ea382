/**
 * The conformance suite every scheduling profile passes (each preset, and a
 * named profile of every picker kind), run through the real load view so the
 * model filter and readiness rules are part of what is checked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { seededRng } from '../../loadtest/sim/random.ts';
import { LoadView } from '../load/load-view.ts';
import { POLICY_NAMES } from '../config/schema.ts';
import { ProfileRegistry, type ProfileSettings } from './profiles/presets.ts';
import type { SchedulingProfile } from './profiles/profile.ts';
import { prefixFacts } from '../../tests/kit/scheduling-fixtures.ts';

const NAMED: Record<string, ProfileSettings> = {
  'two-choices': { affinity: [], picker: 'weighted-max', weights: { load: 1, kvUsage: 0.5 }, powerOfTwoChoices: true },
  'prefix-then-round-robin': { affinity: ['prefix'], picker: 'round-robin', weights: { load: 1, kvUsage: 0 }, powerOfTwoChoices: false },
};
const profileNamed = (name: string, random: () => number): SchedulingProfile =>
  new ProfileRegistry(
    { policy: name, modelPolicies: {}, profiles: NAMED, balanceEpsilon: 0.25, powerOfTwoChoices: false, prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 } },
    random,
  ).forModel('any');
const POLICIES: [string, (random: () => number) => SchedulingProfile][] = [...POLICY_NAMES, ...Object.keys(NAMED)].map((name) => [name, (r) => profileNamed(name, r)]);

const endpointArb = fc.record({
  models: fc.subarray(['m1', 'm2', 'm3'], { minLength: 1 }),
  ready: fc.boolean(),
  draining: fc.boolean(),
  inFlight: fc.nat(20),
  failures: fc.nat(6),
  scraped: fc.option(fc.record({ waiting: fc.nat(10), running: fc.nat(20), kv: fc.double({ min: 0, max: 1, noNaN: true }) }), { nil: undefined }),
});

describe('scheduling profile conformance', () => {
  for (const [name, make] of POLICIES) {
    it(`${name}: returns a non-empty subset of routable endpoints serving the model, never an ejected one while another is available, never a saturated target`, () => {
      fc.assert(
        fc.property(fc.array(endpointArb, { maxLength: 24 }), fc.constantFrom('m1', 'm2', 'm3'), fc.option(fc.string(), { nil: undefined }), fc.integer(), fc.option(fc.tuple(fc.nat(), fc.nat(), fc.double({ min: 0, max: 1, noNaN: true })), { nil: undefined }), fc.option(fc.nat(30), { nil: undefined }), fc.boolean(), (specs, model, sessionKey, seed, prefix, assignedIndex, placeSession) => {
          const view = new LoadView({ maxScrapeAgeMs: 3_000, defaultCapacity: 16, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 1 } });
          view.update({
            version: 1,
            endpoints: specs.map((s, i) => ({ id: `e${i}`, url: `http://10.0.0.${i}:8000`, models: s.models, labels: {}, ready: s.ready, draining: s.draining })),
          });
          specs.forEach((s, i) => {
            const state = [...view.all()][i]!;
            for (let f = 0; f < s.failures; f++) view.settle(state, view.begin(state), 'connect');
            for (let k = 0; k < s.inFlight; k++) view.begin(state);
            if (s.scraped) view.recordScrape(state, new Map([[model, { waiting: s.scraped.waiting, running: s.scraped.running, kvCacheUsage: s.scraped.kv }]]));
          });
          view.tick();
          const candidates = view.candidates(model);
          const profile = make(seededRng(seed));
          // A session is either assigned or to be placed, never both.
          const assignedEndpoint = assignedIndex === undefined || placeSession ? undefined : `e${assignedIndex}`;
          const facts = { model, stream: false, sessionKey, bodyBytes: 1, prefix: prefix && prefixFacts(prefix[0], prefix[1], { share: prefix[2] }), assignedEndpoint, placeSession };
          const saturated = (e: { estimatedWaiting: number }) => e.estimatedWaiting >= 5;
          const schedule = profile.schedule(facts, candidates, saturated);
          const ordered = schedule.kind === 'admit' ? schedule.attempts : schedule.kind === 'saturated' ? schedule.candidates : [];
          if (schedule.kind === 'saturated') assert.ok(candidates.every((c) => c.ejected || saturated(c)) || candidates.every((c) => c.ejected), 'saturated while a routable candidate had room');
          if (schedule.kind === 'admit') assert.ok(!saturated(schedule.attempts[0] as { estimatedWaiting: number }), 'the target is saturated');
          const routable = specs.map((s, i) => ({ s, id: `e${i}` })).filter(({ s }) => s.ready && !s.draining && s.models.includes(model));
          assert.equal(ordered.length > 0, routable.length > 0);
          assert.equal(new Set(ordered.map((e) => e.id)).size, ordered.length, 'no duplicates');
          for (const e of ordered) {
            assert.ok(routable.some((r) => r.id === e.id), `${e.id} is not a routable endpoint serving ${model}`);
          }
          if (candidates.some((c) => !c.ejected)) assert.ok(ordered.every((e) => !e.ejected), 'an ejected endpoint was chosen while another was available');
          if (schedule.kind === 'admit' && placeSession && sessionKey !== undefined) assert.equal(schedule.outcome, 'placed');
          // A shared session assignment is kept exactly while its engine passes the filters.
          const assigned = candidates.find((c) => c.id === assignedEndpoint);
          // Every candidate ejected: they all stay in, and ejection decides nothing.
          const ejectedOut = assigned !== undefined && assigned.ejected && candidates.some((c) => !c.ejected);
          const keepable = assigned !== undefined && !saturated(assigned) && !ejectedOut;
          if (keepable) assert.ok(schedule.kind === 'admit' && schedule.attempts[0] === assigned && schedule.outcome === 'assigned', 'an assignment that passes the filters was not kept');
          if (schedule.kind === 'admit' && assignedEndpoint !== undefined && !keepable) {
            assert.notEqual(schedule.attempts[0]?.id, assignedEndpoint);
            assert.equal(schedule.moved, assigned === undefined ? 'gone' : ejectedOut ? 'ejected' : 'saturated');
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});

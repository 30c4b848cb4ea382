/**
 * The conformance suite every routing policy passes, run through the real
 * load view so the model filter and readiness rules are part of what is
 * checked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { seededRng } from '../../loadtest/sim/random.ts';
import { LoadView } from '../load/load-view.ts';
import { LeastLoadPolicy } from './least-load.ts';
import type { RoutingPolicy } from './policy.ts';
import { RoundRobinPolicy } from './round-robin.ts';
import { SessionAffinityPolicy } from './session-affinity.ts';


const POLICIES: [string, (random: () => number) => RoutingPolicy][] = [
  ['least-load', (r) => new LeastLoadPolicy(r)],
  ['least-load with power of two choices', (r) => new LeastLoadPolicy(r, true)],
  ['session', (r) => new SessionAffinityPolicy(0.25, new LeastLoadPolicy(r))],
  ['round-robin', () => new RoundRobinPolicy()],
];

const endpointArb = fc.record({
  models: fc.subarray(['m1', 'm2', 'm3'], { minLength: 1 }),
  ready: fc.boolean(),
  draining: fc.boolean(),
  inFlight: fc.nat(20),
  failures: fc.nat(6),
  scraped: fc.option(fc.record({ waiting: fc.nat(10), running: fc.nat(20), kv: fc.double({ min: 0, max: 1, noNaN: true }) }), { nil: undefined }),
});

describe('policy conformance', () => {
  for (const [name, make] of POLICIES) {
    it(`${name}: returns a non-empty subset of routable endpoints serving the model, never an ejected one while another is available`, () => {
      fc.assert(
        fc.property(fc.array(endpointArb, { maxLength: 24 }), fc.constantFrom('m1', 'm2', 'm3'), fc.option(fc.string(), { nil: undefined }), fc.integer(), (specs, model, sessionKey, seed) => {
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
          const policy = make(seededRng(seed));
          const { ordered } = policy.order({ model, stream: false, sessionKey, bodyBytes: 1 }, candidates, (e) => e.estimatedWaiting >= 5);
          const routable = specs.map((s, i) => ({ s, id: `e${i}` })).filter(({ s }) => s.ready && !s.draining && s.models.includes(model));
          assert.equal(ordered.length > 0, routable.length > 0);
          assert.equal(new Set(ordered.map((e) => e.id)).size, ordered.length, 'no duplicates');
          for (const e of ordered) {
            assert.ok(routable.some((r) => r.id === e.id), `${e.id} is not a routable endpoint serving ${model}`);
          }
          if (candidates.some((c) => !c.ejected)) assert.ok(ordered.every((e) => !e.ejected), 'an ejected endpoint was chosen while another was available');
        }),
        { numRuns: 300 },
      );
    });
  }
});

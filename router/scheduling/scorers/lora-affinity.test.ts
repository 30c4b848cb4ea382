import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LORA_REQUESTS_INFO, noteAdapterSent, type LoraRequestsInfo } from '../../load/extractors/lora-requests-info.ts';
import { BoundedWalkPicker } from '../pickers/bounded-walk.ts';
import { WeightedMaxPicker } from '../pickers/weighted-max.ts';
import { ProfileRegistry } from '../profiles/presets.ts';
import { SchedulingProfile } from '../profiles/profile.ts';
import { loadScoreScorer } from './load-score.ts';
import { LoraAffinityScorer, LoraTier, loraAffinityPlugin, loraTier } from './lora-affinity.ts';
import { contextOf, ep, facts, seeded, type FakeCandidate } from '../../../tests/kit/scheduling-fixtures.ts';

/** An engine whose last scrape reported `info`. */
function engine(id: string, loadScore: number, info?: LoraRequestsInfo): FakeCandidate {
  const candidate = ep(id, loadScore);
  if (info !== undefined) candidate.attributes.set(LORA_REQUESTS_INFO, info);
  return candidate;
}
const lora = (running: string[], waiting: string[] = [], maxLora = 2, sent: string[] = []): LoraRequestsInfo => ({ running, waiting, maxLora, starts: 0, sentSinceScrape: new Set(sent) });
const adapterRequest = (model: string) => facts({ model, loraBaseModel: 'base' });
const { bound } = loraAffinityPlugin.create(loraAffinityPlugin.parameters.parse({}), { balanceEpsilon: 0.25, prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 } });
const profile = new SchedulingProfile('lora', [new BoundedWalkPicker(new LoraAffinityScorer(), bound), new WeightedMaxPicker([{ scorer: loadScoreScorer, weight: 1 }], seeded(1))]);
const target = (request: ReturnType<typeof facts>, candidates: FakeCandidate[]) => {
  const schedule = profile.schedule(request, candidates, (c) => c.estimatedWaiting > 0);
  return schedule.kind === 'admit' ? [schedule.attempts[0]?.id, schedule.outcome] : [schedule.kind];
};

describe('LoRA tiers from the engine gauge', () => {
  it('ranks running, then a free adapter slot, then the rest, and swap pressure last', () => {
    assert.equal(loraTier(lora(['a', 'b']), 'a'), LoraTier.running);
    assert.equal(loraTier(lora(['b']), 'a'), LoraTier.freeSlot);
    assert.equal(loraTier(lora(['b', 'c']), 'a'), LoraTier.other, 'both slots in use');
    assert.equal(loraTier(lora(['b'], ['c']), 'a'), LoraTier.swapPressure, 'c waits for a slot it does not run in');
    assert.equal(loraTier(lora(['b'], ['b']), 'a'), LoraTier.freeSlot, 'waiting for a batch slot, not for an adapter swap');
    assert.equal(loraTier(undefined, 'a'), LoraTier.other, 'no LoRA state (not scraped, not vLLM)');
    assert.equal(loraTier(lora([], [], 0), 'a'), LoraTier.other, 'LoRA off');
    // What this replica sent since the scrape counts as running there.
    assert.equal(loraTier(lora(['b'], [], 2, ['a']), 'a'), LoraTier.running);
    assert.equal(loraTier(lora(['b'], [], 2, ['c']), 'a'), LoraTier.other, 'b runs and c was just sent: no free slot');
    assert.equal(loraTier(lora(['b'], [], 2, ['b']), 'a'), LoraTier.freeSlot, 'b counted once');
  });
});

describe('LoRA affinity walk', () => {
  it('sends an adapter to the engine running it, not the least loaded one', () => {
    const fleet = [engine('x', 0, lora(['b', 'c'])), engine('y', 0.3, lora(['a'])), engine('z', 0.1, lora(['c', 'd']))];
    assert.deepEqual(target(adapterRequest('a'), fleet), ['y', 'lora_hit']);
  });

  it('prefers a free adapter slot over evicting, and avoids swap pressure', () => {
    const fleet = [engine('full', 0, lora(['b', 'c'])), engine('pressure', 0, lora(['b'], ['d'])), engine('room', 0, lora(['c']))];
    assert.deepEqual(target(adapterRequest('a'), fleet), ['room', 'lora_hit']);
  });

  it('keeps an adapter on one engine across decisions and replicas when nothing runs it yet (its rendezvous order)', () => {
    const fleet = () => ['p', 'q', 'r', 's'].map((id) => engine(id, 0, lora([])));
    const firsts = new Set(Array.from({ length: 20 }, () => target(adapterRequest('a'), fleet())[0]));
    assert.equal(firsts.size, 1);
    const spread = new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((adapter) => target(adapterRequest(adapter), fleet())[0]));
    assert.ok(spread.size >= 3, `adapters spread over engines: ${[...spread].join(',')}`);
  });

  it('places a burst of adapters between two scrapes two to an engine, by what it sent since the scrape', () => {
    const fleet = ['p', 'q', 'r', 's'].map((id) => engine(id, 0, lora([])));
    const adaptersOn = new Map<string, string[]>();
    for (const adapter of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
      const [first] = target(adapterRequest(adapter), fleet);
      const chosen = fleet.find((c) => c.id === first) as FakeCandidate;
      noteAdapterSent(chosen.attributes, adapter);
      adaptersOn.set(chosen.id, [...(adaptersOn.get(chosen.id) ?? []), adapter]);
    }
    assert.deepEqual([...adaptersOn.values()].map((list) => list.length), [2, 2, 2, 2], JSON.stringify(Object.fromEntries(adaptersOn)));
  });

  it('spreads a hot adapter to a second engine at the load bound instead of queueing it', () => {
    // Over max(0.5, (1 + 0.25 + 1) x mean): the engine running it is too hot; the walk goes on.
    const fleet = [engine('hot', 1.5, lora(['a'])), engine('p', 0.1, lora([])), engine('q', 0.1, lora(['b']))];
    const [first, outcome] = target(adapterRequest('a'), fleet);
    assert.notEqual(first, 'hot');
    assert.equal(outcome, 'lora_spill');
  });

  it('in the default preset, sends a session on an adapter where the adapter runs, and places a new shared session there too', () => {
    const auto = new ProfileRegistry({ policy: 'auto', modelPolicies: {}, profiles: {}, balanceEpsilon: 0.25, powerOfTwoChoices: false, prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 } }, seeded(1)).forModel('a');
    const fleet = () => [engine('x', 0.2, lora(['a'])), engine('y', 0, lora([])), engine('z', 0, lora([]))];
    for (let i = 0; i < 20; i++) {
      const keyed = auto.schedule(facts({ model: 'a', loraBaseModel: 'base', sessionKey: `s${i}` }), fleet(), () => false);
      assert.deepEqual(keyed.kind === 'admit' ? [keyed.attempts[0]?.id, keyed.outcome] : keyed.kind, ['x', 'lora_hit']);
    }
    const placed = auto.schedule(facts({ model: 'a', loraBaseModel: 'base', sessionKey: 's', placeSession: true }), fleet(), () => false);
    assert.deepEqual(placed.kind === 'admit' ? [placed.attempts[0]?.id, placed.outcome] : placed.kind, ['x', 'placed']);
    const basePlaced = auto.schedule(facts({ model: 'base', sessionKey: 's', placeSession: true }), fleet(), () => false);
    assert.notEqual(basePlaced.kind === 'admit' ? basePlaced.attempts[0]?.id : basePlaced.kind, 'x', 'a base-model session is placed by load');
  });

  it('declines a request for a base model, leaving the outcome to the picker that decides', () => {
    const fleet = [engine('x', 0.4, lora(['a'])), engine('y', 0, lora([]))];
    assert.deepEqual(target(facts({ model: 'base' }), fleet), ['y', 'least_load']);
    assert.equal(new LoraAffinityScorer().applies(facts({ model: 'a' })), false);
    const context = contextOf(fleet, adapterRequest('a'));
    assert.equal(new BoundedWalkPicker(new LoraAffinityScorer(), bound).declinedOutcome, undefined);
    assert.equal(new BoundedWalkPicker(new LoraAffinityScorer(), bound).pick(context)?.ordered[0]?.id, 'x');
  });
});

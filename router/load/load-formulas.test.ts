import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { estimatedWaiting, loadScore, queuedBySend, type LoadInputs } from './load-formulas.ts';

const input = (over: Partial<LoadInputs>): LoadInputs => ({ scraped: undefined, sentSinceScrape: 0, doneSinceScrape: 0, inFlight: 0, othersInFlight: 0, othersAtScrape: 0, capacity: undefined, ...over });

describe('estimated waiting', () => {
  it('never calls a roomy engine saturated because the router has many requests open to it', () => {
    // 256 sequences of capacity, 50 running, 40 sent since the scrape: all fit.
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 50 }, sentSinceScrape: 40, inFlight: 90, capacity: 256 })), 0);
  });

  it('counts requests sent since the scrape that do not fit in the free capacity', () => {
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 6 }, sentSinceScrape: 5, capacity: 8 })), 3);
  });

  it('takes a queue as proof the engine is full at what it runs, even below its sequence capacity (KV-bound)', () => {
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 2, running: 6 }, sentSinceScrape: 5, capacity: 8 })), 7);
  });

  it('adds new requests to a queue the scrape showed when capacity is unknown', () => {
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 3, running: 10 }, sentSinceScrape: 4 })), 7);
  });

  it('frees the slots of requests that finished since the scrape', () => {
    // Full with a queue of 5 at the scrape; since then 6 of the router's requests finished and 2 were sent.
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 5, running: 4 }, doneSinceScrape: 6, sentSinceScrape: 2, capacity: 4 })), 1);
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 5, running: 4 }, doneSinceScrape: 20, sentSinceScrape: 2, capacity: 4 })), 0);
  });

  it('counts nothing as waiting when capacity is unknown and the scrape showed no queue', () => {
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 10 }, sentSinceScrape: 400 })), 0);
  });

  it('takes replicas it cannot see as mirrors of itself: each uses its share of the room (regression: three replicas with capacity configured let 8-slot engines queue 25 against a bound of 5)', () => {
    // 8 slots, 2 running at the scrape; this replica sent 3 since, and each of the two others presumably as many.
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 2 }, sentSinceScrape: 3, capacity: 8 })), 0);
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 2 }, sentSinceScrape: 3, capacity: 8, unseenReplicas: 2 })), 3);
    // Their requests finish as ours do: 4 of ours done frees 12 slots of the 14 the scrape counted.
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 6, running: 8 }, doneSinceScrape: 4, capacity: 8, unseenReplicas: 2 })), 0);
    // No scrape: its own open requests, times the replicas.
    assert.equal(estimatedWaiting(input({ inFlight: 4, capacity: 8, unseenReplicas: 2 })), 4);
  });

  it('counts at least what the replicas have open, which a scrape can miss (regression: three replicas with capacity configured queued 6-7 against a bound of 5 as a burst outran the engines reading their requests)', () => {
    // Six sent before the scrape, the engine had read two of them: the other four are on their way to it.
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 2 }, inFlight: 6, capacity: 4 })), 2);
    // Two other replicas hold five more, by the fleet read.
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 2 }, inFlight: 6, othersInFlight: 5, othersAtScrape: 5, capacity: 4 })), 7);
  });

  it('falls back to in-flight beyond capacity when the scrape is stale', () => {
    assert.equal(estimatedWaiting(input({ inFlight: 12, capacity: 8 })), 4);
    assert.equal(estimatedWaiting(input({ inFlight: 12 })), 0);
  });

  it('is never negative (property)', () => {
    fc.assert(
      fc.property(fc.option(fc.record({ waiting: fc.nat(1000), running: fc.nat(1000) }), { nil: undefined }), fc.nat(1000), fc.nat(1000), fc.nat(1000), fc.nat(1000), fc.nat(1000), fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }), (scraped, sent, done, inFlight, others, othersAtScrape, capacity) => {
        const inputs = { scraped, sentSinceScrape: sent, doneSinceScrape: done, inFlight, othersInFlight: others, othersAtScrape, capacity };
        assert.ok(estimatedWaiting(inputs) >= 0);
        assert.ok(loadScore(inputs, 256) >= 0);
      }),
    );
  });
});

describe('queued by a send', () => {
  it('is 1 only when a known or proven capacity is already filled', () => {
    assert.equal(queuedBySend(input({ scraped: { waiting: 0, running: 7 }, capacity: 8 })), 0);
    assert.equal(queuedBySend(input({ scraped: { waiting: 0, running: 7 }, sentSinceScrape: 1, capacity: 8 })), 1);
    assert.equal(queuedBySend(input({ scraped: { waiting: 0, running: 700 } })), 0, 'no evidence without a capacity');
    assert.equal(queuedBySend(input({ scraped: { waiting: 1, running: 3 } })), 1, 'a queue proves the engine full');
    assert.equal(queuedBySend(input({ scraped: { waiting: 1, running: 3 }, doneSinceScrape: 2 })), 0, 'two finished since');
  });

  it('counts the send once more for each replica taken to mirror this one', () => {
    // Three replicas that cannot see each other, 6 of 8 slots busy: each sees room for two, so all
    // three sending one would put one in the queue.
    assert.equal(queuedBySend(input({ scraped: { waiting: 0, running: 6 }, capacity: 8, unseenReplicas: 2 })), 1);
    assert.equal(queuedBySend(input({ scraped: { waiting: 0, running: 5 }, capacity: 8, unseenReplicas: 2 })), 0);
    // Already queued: every mirrored send queues.
    assert.equal(queuedBySend(input({ scraped: { waiting: 2, running: 8 }, capacity: 8, unseenReplicas: 2 })), 3);
    // With shared state, the others the fleet read counted mirror this replica's sends until the next read.
    assert.equal(queuedBySend(input({ scraped: { waiting: 0, running: 8 }, capacity: 8, mirroringOthers: 2 })), 3);
    assert.equal(queuedBySend(input({ scraped: { waiting: 0, running: 7 }, capacity: 8, mirroringOthers: 2 })), 2);
  });
});

describe('load score', () => {
  it('is outstanding work over capacity', () => {
    assert.equal(loadScore(input({ scraped: { waiting: 2, running: 6 }, sentSinceScrape: 2, capacity: 8 }), 256), 10 / 8);
    assert.equal(loadScore(input({ scraped: { waiting: 2, running: 6 }, sentSinceScrape: 2, doneSinceScrape: 3, capacity: 8 }), 256), 7 / 8);
  });

  it('uses the default capacity when unknown, so scores share one scale', () => {
    assert.equal(loadScore(input({ scraped: { waiting: 0, running: 64 } }), 256), 0.25);
  });

  it('falls back to in-flight when the scrape is stale', () => {
    assert.equal(loadScore(input({ inFlight: 4, capacity: 8 }), 256), 0.5);
  });

  it('ranks a small busy engine above a large idle one', () => {
    const small = loadScore(input({ scraped: { waiting: 0, running: 2 }, capacity: 2 }), 256);
    const large = loadScore(input({ scraped: { waiting: 0, running: 8 }, capacity: 64 }), 256);
    assert.ok(small > large);
  });
});

describe('outstanding work with the other replicas\' counts (shared state)', () => {
  it('adds their in-flight to this replica\'s when there is no fresh scrape', () => {
    assert.equal(loadScore(input({ inFlight: 3, othersInFlight: 5, capacity: 8 }), 256), 1);
    assert.equal(estimatedWaiting(input({ scraped: undefined, inFlight: 3, othersInFlight: 9, capacity: 8 })), 4);
  });

  it('adds only what they sent since the scrape (the engine counted the rest), and frees what they saw finish', () => {
    // Scrape: 6 running; others had 4 open then and 7 now: 3 more the scrape did not see.
    assert.equal(estimatedWaiting(input({ scraped: { waiting: 0, running: 6 }, othersAtScrape: 4, othersInFlight: 7, capacity: 8 })), 1);
    // Others had 4 open at the scrape and 1 now: 3 slots the scrape counted are free again.
    assert.equal(loadScore(input({ scraped: { waiting: 0, running: 6 }, othersAtScrape: 4, othersInFlight: 1, capacity: 8 }), 256), 3 / 8);
  });
});

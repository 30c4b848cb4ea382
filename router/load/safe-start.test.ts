import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint } from '../../discovery/endpoint.ts';
import { isSaturated } from '../scheduling/saturation.ts';
import { LoadView } from './load-view.ts';
import { ReplicaCount } from './replica-count.ts';
import { SafeStartLimit, type SafeStartSettings } from './safe-start.ts';

const SETTINGS: SafeStartSettings = { enabled: true, initialLimit: 4, queueBudget: 5, ttfbTolerance: 2 };


/** Sends until the limit is reached, as admission would. */
function fill(limit: SafeStartLimit, inFlight = 0): number {
  while (inFlight < limit.value) limit.sent(++inFlight);
  return inFlight;
}

/**
 * A scrape interval in which this replica used its whole limit and `succeeded`
 * of its requests succeeded (each replaced at once), then the scrape; returns
 * the limit after it.
 */
function busy(limit: SafeStartLimit, waiting: number, running: number, own: number, learned?: number, succeeded = 0): number {
  let open = fill(limit);
  for (let i = 0; i < succeeded; i++) {
    limit.completed(--open, true, false);
    limit.sent(++open);
  }
  limit.scraped(waiting, running, own, learned, open);
  return limit.value;
}

describe('safe start limit', () => {
  it('starts at the initial limit and grows at a scrape without a queue after the limit was in use', () => {
    const limit = new SafeStartLimit(SETTINGS);
    assert.equal(limit.value, 4);
    limit.scraped(0, 0, 0, undefined, 0);
    limit.scraped(0, 1, 1, undefined, 1);
    assert.equal(limit.value, 4, 'one request open: the traffic, not the engine, limited');
    assert.equal(busy(limit, 0, 4, 4), 9, 'idle before, all of ours running now: the larger of x1.5 and the whole queue budget (the only sender)');
    assert.equal(busy(limit, 0, 9, 9), 14);
    assert.equal(busy(limit, 0, 14, 14), 21, 'x1.5 once that is more than the budget');
    assert.equal(limit.phase, 'slow-start');
  });

  it('awaits evidence (a scrape soon) only while the limit held this replica back and capacity is unknown', () => {
    const limit = new SafeStartLimit(SETTINGS);
    limit.sent(3);
    assert.equal(limit.awaitsEvidence, false, 'below the limit the traffic, not the limit, holds it back');
    limit.sent(4);
    assert.equal(limit.awaitsEvidence, true);
    limit.scraped(0, 4, 4, undefined, 4);
    assert.equal(limit.awaitsEvidence, false, 'the scrape answered it');
    fill(limit, 4);
    limit.scraped(3, 8, 4, 8, limit.value);
    assert.equal(limit.phase, 'learned');
    fill(limit, 0);
    assert.equal(limit.awaitsEvidence, false, 'learned: the regular scrapes govern');
  });

  it('after a queue, grows only at the second scrape without one: a single one can be the trough between two waves of a burst', () => {
    const limit = new SafeStartLimit(SETTINGS);
    assert.equal(busy(limit, 2, 8, 4, 8), 4, 'a queue never raises the limit');
    assert.equal(busy(limit, 0, 8, 4, 8), 4);
    assert.equal(busy(limit, 0, 8, 4, 8), 6, 'half the engine ours: 4 + half the budget');
  });

  it('learns nothing from a scrape that shows fewer requests than it counted there (answers on their way back)', () => {
    const limit = new SafeStartLimit({ ...SETTINGS, initialLimit: 9 });
    busy(limit, 0, 8, 9);
    assert.equal(busy(limit, 0, 8, 9), 9);
    assert.equal(busy(limit, 0, 2, 9), 9, 'nor does it end the quiet spell');
  });

  it('grows from the limit when the engine holds fewer than it has open, all just sent: an engine faster than the wire (regression: a cold router held a 3 ms engine at 4 requests)', () => {
    const limit = new SafeStartLimit(SETTINGS);
    // Every open request was sent within the scrape's guard, so none is surely counted; the engine runs 1
    // and finishes hundreds between scrapes.
    const steps = [0, 1, 2, 3, 4, 5].map(() => busy(limit, 0, 1, 0, undefined, 200));
    assert.deepEqual(steps, [4, 6, 9, 13, 20, 30], 'x1.5 at every quiet scrape from the second on');
    assert.equal(busy(limit, 3, 10, 0, undefined, 200), 15, 'a queue hands over: within running + budget');
    assert.equal(limit.phase, 'learned');
    const wave = new SafeStartLimit({ ...SETTINGS, initialLimit: 9 });
    busy(wave, 0, 2, 9);
    assert.equal(busy(wave, 0, 2, 9), 9, 'requests the engine surely had and no longer holds are answers on their way back: nothing learned');
  });

  it('grows from what the engine shows, not from the limit, when it holds fewer than were sent but finishes few: an engine that reads its requests late (regression: a cold router grew past 8 slots + 5 queued)', () => {
    const limit = new SafeStartLimit({ ...SETTINGS, initialLimit: 10 });
    // An 8-slot engine that has read 6 of the 10 open, all sent before the scrape; 4 answers came back since the last one.
    busy(limit, 0, 6, 6, undefined, 4);
    assert.equal(busy(limit, 0, 6, 6, undefined, 4), 11, 'the 6 it shows + 5 queued, not 10 x 1.5 = 15 of which 2 would wait past the budget');
    const fast = new SafeStartLimit({ ...SETTINGS, initialLimit: 10 });
    busy(fast, 0, 6, 6, undefined, 40);
    assert.equal(busy(fast, 0, 6, 6, undefined, 40), 15, 'the same scrape after 4 x the limit came back: an engine faster than the wire');
  });

  it('grows from what the engine ran of its requests, not from the limit (some are on their way)', () => {
    const limit = new SafeStartLimit({ ...SETTINGS, initialLimit: 9 });
    busy(limit, 0, 9, 8);
    assert.equal(busy(limit, 0, 9, 8), 12, '8 of ours + 8/9 of the budget, not 9 x 1.5');
  });

  it('grows by its share of the queue budget when other senders fill the engine too', () => {
    const limit = new SafeStartLimit(SETTINGS);
    busy(limit, 0, 12, 4);
    assert.equal(busy(limit, 0, 12, 4), 6, 'x1.5 beats a third of the budget');
  });

  it('at a scrape that shows a queue, cuts back to its share of running + budget: three replicas together hold what the engine takes', () => {
    const replicas = [4, 4, 4].map(() => new SafeStartLimit(SETTINGS));
    for (const r of replicas) fill(r);
    // A 4-slot engine, three replicas with 4 each: 4 running, 8 waiting.
    for (const r of replicas) r.scraped(8, 4, 4, 4, 4);
    const total = replicas.reduce((sum, r) => sum + r.value, 0);
    assert.equal(total, 9, 'the engine takes 4 + 5 queued');
    assert.ok(replicas.every((r) => r.phase === 'learned'));
    const alone = new SafeStartLimit({ ...SETTINGS, initialLimit: 20 });
    fill(alone);
    alone.scraped(2, 8, 10, 8, 20);
    assert.equal(alone.value, 13, 'the only sender: all of running + budget');
    const below = new SafeStartLimit(SETTINGS);
    fill(below);
    below.scraped(2, 8, 10, 8, 4);
    assert.equal(below.value, 4, 'a queue never raises the limit');
    const idle = new SafeStartLimit({ ...SETTINGS, initialLimit: 50 });
    idle.scraped(3, 8, 0, 8, 0);
    assert.equal(idle.value, 13, 'no request of ours counted: keep the limit, within running + budget');
  });

  it('after the hand-over, grows only at scrapes, and not past learned capacity + budget', () => {
    const limit = new SafeStartLimit(SETTINGS);
    fill(limit);
    limit.scraped(1, 8, 4, 8, 4);
    assert.equal(limit.value, 4, '4 of the 9 counted were ours: 4/9 of 8 running + 5 queued is more than 4');
    for (let token = 0; token < 5; token++) limit.firstByte(token, token === 0 ? 10 : 5_000, 4);
    assert.equal(limit.value, 4, 'time to first byte no longer moves the limit');
    fill(limit);
    limit.scraped(0, 8, 4, 8, 4);
    assert.equal(limit.value, 4, 'one scrape without a queue right after one with a queue can catch a full engine between two requests');
    const steps: number[] = [];
    for (let i = 0; i < 6; i++) {
      fill(limit);
      limit.scraped(0, 8, Math.min(8, limit.value), 8, limit.value);
      steps.push(limit.value);
    }
    assert.deepEqual(steps, [6, 9, 13, 13, 13, 13], 'at the second quiet scrape, steps of its share of the budget, capped at learned capacity 8 + budget 5');
  });

  it('after the hand-over, three replicas growing at the same scrapes stay within learned capacity + budget together', () => {
    // Clients keep every replica at its limit on one engine; each round is one scrape interval.
    const run = (slots: number) => {
      const replicas = [0, 1, 2].map(() => new SafeStartLimit(SETTINGS));
      const queued: number[] = [];
      let learned: number | undefined;
      for (let round = 0; round < 8; round++) {
        const total = replicas.reduce((sum, r) => sum + r.value, 0);
        const [waiting, running] = [Math.max(0, total - slots), Math.min(total, slots)];
        if (waiting > 0) learned = running;
        queued.push(waiting);
        for (const r of replicas) {
          fill(r);
          r.scraped(waiting, running, r.value, learned, r.value);
        }
      }
      return queued;
    };
    assert.deepEqual(run(8), [4, 4, 4, 4, 4, 4, 4, 4], '3 x 4 on 8 slots: 4 queued, within its third of 8 + 5 each');
    assert.deepEqual(run(16), [0, 0, 2, 2, 2, 2, 2, 2], '3 x 4 on 16 slots: x1.5 each after two quiet scrapes, then a queue stops growth');
    assert.deepEqual(run(1_000).slice(0, 4), [0, 0, 0, 0], 'a big engine takes the growth');
  });

  it('slow start: a stream that starts fast while the limit is in use adds one', () => {
    const limit = new SafeStartLimit(SETTINGS);
    let inFlight = fill(limit);
    for (let token = 0; token < 4; token++) limit.firstByte(token, 40, inFlight);
    assert.equal(limit.value, 8);
    inFlight = 1;
    limit.firstByte(4, 40, inFlight);
    assert.equal(limit.value, 8, 'one of 8 open: nothing learned');
  });

  it('backs off at the next scrape when most recent streams start late and still do then, once per window, then grows only at scrapes', () => {
    const limit = new SafeStartLimit({ ...SETTINGS, initialLimit: 16 });
    const inFlight = fill(limit);
    let token = 0;
    for (; token < 5; token++) limit.firstByte(token, 100, inFlight);
    assert.equal(limit.value, 21, 'five fast starts');
    limit.firstByte(token++, 900, inFlight);
    limit.scraped(0, 5, 0, undefined, inFlight, 22);
    assert.equal(limit.value, 21, 'one slow stream (a long prompt) is no queue');
    limit.firstByte(token++, 900, inFlight);
    limit.firstByte(token++, 900, inFlight);
    assert.equal(limit.value, 21, 'most of the last five late (threshold 2 x 100 + 50 ms): not yet, a busy host slows them for a moment');
    limit.scraped(0, 5, 0, undefined, inFlight, 22);
    assert.equal(limit.value, 10, 'still late at the next scrape: halve');
    assert.equal(limit.phase, 'probing');
    limit.firstByte(token, 900, inFlight);
    limit.scraped(0, 5, 0, undefined, inFlight, 30);
    assert.equal(limit.value, 10, 'requests sent before the backoff do not count again');
    limit.firstByte(22, 900, inFlight);
    limit.scraped(0, 5, 0, undefined, inFlight, 30);
    assert.equal(limit.value, 5, 'one sent after it does');
    fill(limit, 0);
    limit.scraped(0, 5, 5, undefined, 5, 30);
    assert.equal(limit.value, 5, 'no growth while streams still start late');
    for (let i = 0; i < 5; i++) limit.firstByte(30 + i, 100, 5);
    assert.equal(limit.value, 5, 'fast starts no longer add one each');
    fill(limit, 0);
    limit.scraped(0, 5, 5, undefined, 5, 40);
    assert.equal(limit.value, 10);
  });

  it('does not back off when late first bytes recover before the next scrape (the host was busy, not the engine)', () => {
    const limit = new SafeStartLimit({ ...SETTINGS, initialLimit: 16 });
    const inFlight = fill(limit);
    let token = 0;
    for (; token < 5; token++) limit.firstByte(token, 100, inFlight);
    for (let i = 0; i < 3; i++) limit.firstByte(token++, 900, inFlight);
    for (let i = 0; i < 5; i++) limit.firstByte(token++, 100, inFlight);
    limit.scraped(0, 5, 0, undefined, inFlight, 30);
    assert.ok(limit.value >= 21, `kept ${limit.value}`);
    assert.equal(limit.phase, 'slow-start');
  });

  it('with the replica count known, takes its share of what a scrape shows the engine running without a queue (a replica joining a busy fleet)', () => {
    const joiner = new SafeStartLimit({ ...SETTINGS, replicas: { value: 3 } });
    joiner.scraped(0, 60, 0, undefined, 0);
    assert.equal(joiner.value, 20);
    assert.equal(joiner.burstBound, 20 + 1, 'its share of the queue budget: 5 over 3 replicas, in whole requests');
    // Unknown count: only its own requests are evidence.
    const alone = new SafeStartLimit(SETTINGS);
    alone.scraped(0, 60, 0, undefined, 0);
    assert.equal(alone.value, 4);
    // Three fresh replicas at their first limit see each other's: none takes more than its own.
    const fresh = new SafeStartLimit({ ...SETTINGS, replicas: { value: 3 } });
    assert.equal(busy(fresh, 0, 12, 4), 4);
    // A queue is no room: nothing is taken from it.
    const queued = new SafeStartLimit({ ...SETTINGS, replicas: { value: 3 } });
    queued.scraped(2, 60, 0, undefined, 0);
    assert.equal(queued.value, 4);
  });

  it('reads the replica count at each scrape: a count that follows the Service (a fleet of four scaled to two) changes the share from then on', () => {
    const replicas = new ReplicaCount();
    const limit = new SafeStartLimit({ ...SETTINGS, replicas });
    limit.scraped(0, 60, 0, undefined, 0);
    assert.equal(limit.value, 4, 'not counted, not configured: only its own requests are evidence');
    replicas.counted(4);
    limit.scraped(0, 60, 0, undefined, 0);
    assert.equal(limit.value, 15);
    replicas.counted(2);
    limit.scraped(0, 60, 0, undefined, 0);
    assert.equal(limit.value, 30);
  });

  it('keeps a request that belongs to the engine up to the burst bound: what the last quiet scrape showed running plus the queue budget (its share with the replica count known), at least the limit', () => {
    const limit = new SafeStartLimit(SETTINGS);
    assert.equal(limit.burstBound, Math.max(4, 0 + SETTINGS.queueBudget), 'cold: nothing seen running, the budget or the limit');
    const third = new SafeStartLimit({ ...SETTINGS, replicas: { value: 3 } });
    assert.equal(third.burstBound, 4, 'a third of the budget of 5 is less than the limit');
    // Its own 9 requests ran without a queue (sessions above the limit): the bound follows.
    limit.scraped(0, 9, 9, undefined, 9);
    assert.equal(limit.burstBound, Math.max(limit.value, 9 + SETTINGS.queueBudget));
    // The last scrape counts, not the best one: a scrape between two waves lowers the bound to the limit.
    limit.scraped(0, 2, 2, undefined, 2);
    assert.equal(limit.burstBound, Math.max(limit.value, 2 + SETTINGS.queueBudget));
    // Three replicas that each saw 8 running: each takes a third of 8 + 5, whatever share of the 8 was its own.
    third.scraped(0, 8, 6, undefined, 6);
    assert.equal(third.burstBound, Math.max(third.value, Math.floor((8 + SETTINGS.queueBudget) / 3)));
    // Handed over: the engine's own queue decides.
    limit.scraped(3, 12, 12, 12, 15);
    assert.equal(limit.burstBound, undefined);
  });

  it('grows by completions when the engine cannot be scraped', () => {
    const limit = new SafeStartLimit(SETTINGS);
    fill(limit);
    limit.completed(3, true, false);
    assert.equal(limit.value, 4, 'scrapes pace growth while they work');
    limit.completed(3, true, true);
    limit.completed(3, false, true);
    assert.equal(limit.value, 5, 'a success while the limit is in use adds one; a failure does not');
  });
});

describe('safe start in the load view', () => {
  const endpoint = (id: string, capacity?: number): Endpoint => ({ id, url: `http://127.0.0.1:${1000 + id.length}`, models: ['m'], labels: {}, ready: true, draining: false, ...(capacity === undefined ? {} : { capacity }) });
  const thresholds = { maxWaiting: 5, kvCacheThreshold: 0.9, maxInFlightPerEndpoint: 0 };
  const gauges = (waiting: number, running: number) => new Map([['m', { waiting, running, kvCacheUsage: undefined }]]);

  function fixture() {
    const clock = { now: 1_000_000 };
    const view = new LoadView(
      { maxScrapeAgeMs: 3_000, defaultCapacity: 256, ejection: { consecutiveFailures: 3, baseMs: 10_000, maxMs: 60_000, maxShare: 0.5 }, safeStart: SETTINGS },
      () => clock.now,
    );
    view.update({ version: 1, endpoints: [endpoint('unknown'), endpoint('configured', 64)] });
    const [unknown, configured] = [...view.all()] as [ReturnType<typeof view.candidates>[number], ReturnType<typeof view.candidates>[number]];
    return { clock, view, unknown, configured };
  }

  it('calls an endpoint of unknown capacity saturated at its limit; configured capacity wins', () => {
    const { view, unknown, configured } = fixture();
    view.markScrapeStart(unknown);
    view.recordScrape(unknown, gauges(0, 0));
    for (let i = 0; i < 4; i++) {
      assert.equal(isSaturated(unknown, thresholds), false);
      view.begin(unknown);
    }
    assert.equal(unknown.concurrencyLimit, 4);
    assert.equal(isSaturated(unknown, thresholds), true, 'four open, no queue anywhere: the safe start holds the fifth back');
    for (let i = 0; i < 40; i++) view.begin(configured);
    assert.equal(configured.concurrencyLimit, undefined);
    assert.equal(isSaturated(configured, thresholds), false);
  });

  it('tells the limit what share of the scraped engine load was its own', () => {
    const { view, unknown, clock } = fixture();
    let tokens: number[] = [];
    for (let interval = 0; interval < 2; interval++) {
      for (const token of tokens) view.settle(unknown, token);
      tokens = Array.from({ length: 4 }, () => view.begin(unknown));
      clock.now += 100; // sent well before the scrape began: it counted them
      view.markScrapeStart(unknown);
      view.recordScrape(unknown, gauges(0, 8));
    }
    assert.equal(unknown.concurrencyLimit, 6, 'half the engine was ours, twice: 4 + half the budget');
    for (const token of tokens) view.settle(unknown, token);
    for (let i = 0; i < 6; i++) view.begin(unknown);
    clock.now += 100;
    view.markScrapeStart(unknown);
    view.recordScrape(unknown, gauges(10, 8));
    assert.equal(unknown.learnedCapacity, 8);
    assert.equal(unknown.concurrencyLimit, Math.floor((8 + 5) * (6 / 18)), 'a queue: our third of running + budget');
  });

  it('grows by completions only for an engine never scraped in a whole scrape max-age', () => {
    const { view, unknown, clock } = fixture();
    const complete = () => {
      for (let i = 0; i < 4; i++) view.settle(unknown, view.begin(unknown));
      view.begin(unknown);
    };
    for (let i = 0; i < 3; i++) view.begin(unknown);
    complete();
    assert.equal(unknown.concurrencyLimit, 4, 'its first scrape may still come');
    clock.now += 3_001;
    complete();
    assert.ok((unknown.concurrencyLimit ?? 0) > 4, `never scraped: grows by completions (${unknown.concurrencyLimit})`);
    const { view: other, unknown: scrapedOnce, clock: otherClock } = fixture();
    other.markScrapeStart(scrapedOnce);
    other.recordScrape(scrapedOnce, gauges(0, 0));
    otherClock.now += 10_000;
    for (let i = 0; i < 3; i++) other.begin(scrapedOnce);
    for (let i = 0; i < 4; i++) other.settle(scrapedOnce, other.begin(scrapedOnce));
    assert.equal(scrapedOnce.concurrencyLimit, 4, 'scraped once, stale now: what it showed still holds');
  });

  it('feeds streams\' time to first byte to the limit', () => {
    const { view, unknown } = fixture();
    const tokens = Array.from({ length: 4 }, () => view.begin(unknown));
    for (const token of tokens) view.firstByte(unknown, token, 30);
    assert.equal(unknown.concurrencyLimit, 8);
    assert.equal(unknown.safeStart?.status.ttfbBaselineMs, 30);
  });
});

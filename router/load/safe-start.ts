/**
 * The safe start: a limit on the requests this replica keeps open to an
 * engine whose capacity nobody configured, for as long as scrapes have not
 * shown what the engine can take.
 *
 * The failure it prevents: estimated waiting is 0 for an engine of unknown
 * capacity until a scrape shows a queue, so a router fresh from a rollout,
 * scale-up or restart forwarded the first burst whole (`ab -n 10000 -c 2000`
 * put ~2,000 requests into small engines before shedding began) and, with a
 * router queue configured, left the backlog in the engines' queues instead of
 * its own, where priorities and deadlines apply. So the limit starts small and
 * grows only on evidence that the engine keeps up, in the spirit of TCP slow
 * start and adaptive concurrency limits:
 *
 * - **Grow** at each scrape that, like the one before, shows no queue,
 *   after scrape intervals in which this replica used its whole limit (one
 *   is enough when the engine ran only this replica's requests, below its
 *   limit, and now runs only them, at it) and streams' time to first byte
 *   stayed near the engine's unloaded value: ×1.5 what the engine ran of
 *   this replica's requests, or by this replica's share of the queue
 *   budget, whichever is more. Until the first backoff, each stream whose
 *   first byte comes as fast also adds one (slow start).
 * - **Back off** when a scrape shows a queue: the limit falls to this
 *   replica's share of what the engine runs plus the queue budget (if it was
 *   above), where the share is the part of the engine's requests the scrape
 *   counted as ours.
 *   Every replica sees the same scrape, so together they cut back to what
 *   the engine holds instead of each taking the whole budget; and when a
 *   stream's first byte comes well above the unloaded value, as did most of
 *   the last few, halve (once per window of requests, as TCP does once per
 *   round trip).
 * - **Hand over** once a queue has shown the engine full: from then on
 *   scrapes and the learned capacity govern; the limit only steps, at quiet
 *   scrapes, toward this replica's share of learned capacity plus queue
 *   budget. Configured
 *   capacity disables the limit altogether (the endpoint state decides).
 *
 * Growth is paced by scrapes, which every replica sees, not by completions,
 * which each replica sees alone: three replicas would otherwise each grow on
 * their own completions and triple the flood. Non-streamed answers' first
 * byte is the whole answer, whose length depends on `max_tokens`, so only
 * streams feed the time-to-first-byte signals. Engines whose metrics cannot
 * be scraped (growth by scrapes impossible) grow by one per successful
 * completion instead, once the endpoint has gone a whole scrape max-age
 * without a single successful scrape.
 *
 * Nothing here reads a clock; the load view calls it at send, first byte,
 * settle and scrape.
 */

import type { ReplicaCountReader } from './replica-count.ts';
import { TtfbBaseline } from './ttfb-baseline.ts';

/** Safe-start settings (from `load.safeStart` and `admission.maxWaiting`). */
export interface SafeStartSettings {
  readonly enabled: boolean;
  /** Requests this replica may have open to a new endpoint of unknown capacity (≥ 1). */
  readonly initialLimit: number;
  /** Requests the router may leave queued in an engine: `admission.maxWaiting` (≥ 0). */
  readonly queueBudget: number;
  /** A stream's time to first byte above this multiple of the engine's unloaded value means the engine fell behind (> 1). */
  readonly ttfbTolerance: number;
  /** Router replicas sharing the engines without shared state (counted or configured; see replica-count.ts); absent or undefined: unknown. */
  readonly replicas?: ReplicaCountReader | undefined;
}

/**
 * Where the limit is: `slow-start` (grows on every fast first byte and each
 * scrape), `probing` (after a backoff: grows at scrapes only), `learned`
 * (a scrape showed the engine full: the limit follows scrapes and learned
 * capacity). In this order, the values of `switchyard_backend_safe_start_phase`.
 */
export const SAFE_START_PHASES = ['slow-start', 'probing', 'learned'] as const;
/** One of {@link SAFE_START_PHASES}. */
export type SafeStartPhase = (typeof SAFE_START_PHASES)[number];

/**
 * Which evidence last moved the limit: a fast stream start (`first-byte`), a
 * scrape without a queue after the limit was in use (`quiet-scrape`), this
 * replica's share of what the engine ran (`replica-share`) or of the fleet's
 * limits (`fleet-share`), a capacity another replica learned
 * (`fleet-capacity`), completions of an engine that cannot be scraped
 * (`completions`); or cut it: a queue (`queue`), first bytes still late at a
 * scrape (`late-first-bytes`). `initial` until then.
 */
export type SafeStartReason = 'initial' | 'first-byte' | 'quiet-scrape' | 'replica-share' | 'fleet-share' | 'fleet-capacity' | 'completions' | 'queue' | 'late-first-bytes';

/** What `/debug/endpoints` shows of the limit. */
export interface SafeStartStatus {
  /** Which evidence last moved the limit (or handed it over). */
  readonly reason: SafeStartReason;
  readonly limit: number;
  /** Requests a session's or pinned response's engine may still take above the limit ({@link SafeStartLimit.burstBound}); null once learned. */
  readonly burstBound: number | null;
  readonly phase: SafeStartPhase;
  /** Unloaded time to first byte of streams (ms), once seen. */
  readonly ttfbBaselineMs: number | null;
  /** Median of the last few streams' time to first byte (ms), once seen. */
  readonly ttfbRecentMs: number | null;
}

/** What the other live replicas hold of one engine's safe start, read from the shared state (router/state/fleet-safe-start.ts). */
export interface FleetSafeStartRecord {
  /** Sum of their limits (requests, may be fractional). */
  readonly limits: number;
  /** How many of them hold a limit for the engine (≥ 1). */
  readonly replicas: number;
  /** The largest capacity any of them learned, if any. */
  readonly learnedCapacity: number | undefined;
}

/** Never below this: an engine always gets one request. */
const MIN_LIMIT = 1;
/** Scrapes in a row without a queue, each after an interval that used the whole limit, that growth needs. */
const QUIET_SCRAPES = 2;
/** Growth factor per scrape that shows no queue. */
const GROWTH = 1.5;
/** Factor applied when first bytes come late. */
const BACKOFF = 0.5;
/**
 * Added to the tolerance (ms): the router measures time to first byte on its
 * own event loop, whose hiccups (tens of ms under a connection ramp) and timer
 * granularity must not read as an engine falling behind.
 */
const TTFB_SLACK_MS = 50;
/**
 * Successful completions since the last scrape, as a multiple of the limit,
 * that mark an engine faster than the wire: each request spends under a
 * quarter of a scrape interval in all, so a scrape catches few of them at
 * the engine however busy it is.
 */
const FAST_TURNOVER = 4;

/** The safe-start limit of one endpoint, in requests this replica has open to it. */
export class SafeStartLimit {
  readonly #settings: SafeStartSettings;
  #limit: number;
  #phase: SafeStartPhase = 'slow-start';
  #reason: SafeStartReason = 'initial';
  /** This replica reached the limit since the last scrape: growing is warranted only then. */
  #reached = false;
  /** Scrapes in a row, up to now, without a queue after intervals that used the whole limit. */
  #quietScrapes = 0;
  /** At the last scrape the engine ran nothing but this replica's requests, and fewer than its limit. */
  #idleBefore = false;
  /** The engine's unloaded first-byte time, learned from the streams this replica sends it. */
  readonly #ttfb = new TtfbBaseline();
  /** Late first bytes of requests numbered below this were sent before the last backoff, which already answered them. */
  #backoffBefore = 0;
  /** Requests that succeeded since the last scrape. */
  #succeededSinceScrape = 0;
  /** Most recent streams started late: halve at the next scrape if they still do. */
  #lateArmed = false;
  /** What the last scrape without a queue showed the engine running: this replica's requests, or its share of all of them when the replica count is known. */
  #roomSeen = 0;

  constructor(settings: SafeStartSettings) {
    this.#settings = settings;
    this.#limit = Math.max(MIN_LIMIT, settings.initialLimit);
  }

  /** The limit now (whole requests, ≥ 1). */
  get value(): number {
    return Math.max(MIN_LIMIT, Math.floor(this.#limit));
  }

  /** The limit before rounding (requests, ≥ 1): what the fleet sums, so shares do not lose fractions round after round. */
  get exact(): number {
    return Math.max(MIN_LIMIT, this.#limit);
  }

  /**
   * The other live replicas hold `limits` in all for this engine, `replicas`
   * of them: take at least the share of that sum this replica would have
   * if it were split over all of them and this one. A replica that joins a
   * warm fleet starts from the fleet's record, a third of it in a fleet of
   * two; the warm ones keep theirs, and their traffic shrinks as the
   * Service spreads over one more. Never lowers the limit: sharing by
   * averaging both ways drifts upwards when the replicas read each other's
   * figures a round apart, and an even share of fresh replicas' first limits
   * is the first limit, so N fresh replicas never multiply a burst.
   */
  shareWithFleet(limits: number, replicas: number): void {
    this.#move(Math.max(this.#limit, limits / (replicas + 1)), 'fleet-share');
  }

  /** Another replica saw the engine full: its capacity is known, as if this replica had seen the queue. */
  capacityLearnedByFleet(): void {
    this.#phase = 'learned';
    this.#reason = 'fleet-capacity';
  }

  get phase(): SafeStartPhase {
    return this.#phase;
  }

  /**
   * This replica used its whole limit since the last scrape and the engine's
   * capacity is still unknown: the next scrape is the evidence the limit
   * grows on (or cuts on), so it is worth taking soon.
   */
  get awaitsEvidence(): boolean {
    return this.#reached && this.#phase !== 'learned';
  }

  /**
   * Requests this replica may have open to the engine for work that belongs
   * there (a session's or pinned response's engine), whatever the limit says
   * of new work: what the last scrape without a queue showed the engine
   * running plus the queue budget, this replica's share of both when the
   * replica count is known (the others are taken to send as it does), and
   * never less than the limit. That is the whole burst protection: no engine
   * is sent more than it was last seen running plus its queue bound. The
   * last scrape, not the most ever seen: three replicas whose best scrapes
   * each caught more of a full engine than the others' would together
   * queue beyond the bound (8-slot engines queued 7 against 5).
   * Undefined once learned: the engine's own queue then decides.
   */
  get burstBound(): number | undefined {
    if (this.#phase === 'learned') return undefined;
    const replicas = this.#settings.replicas?.value ?? 1;
    return Math.max(this.value, Math.floor((this.#roomSeen + this.#settings.queueBudget) / replicas));
  }

  get status(): SafeStartStatus {
    return { limit: this.value, burstBound: this.burstBound ?? null, phase: this.#phase, reason: this.#reason, ttfbBaselineMs: this.#ttfb.baselineMs ?? null, ttfbRecentMs: this.#ttfb.recentMs ?? null };
  }

  /** A request was sent; `inFlight` counts it. */
  sent(inFlight: number): void {
    if (inFlight >= this.value) this.#reached = true;
  }

  /**
   * A stream's first byte came `ttfbMs` after it was sent. `token` numbers
   * the request (the load view's send counter), `inFlight` the requests open now.
   */
  firstByte(token: number, ttfbMs: number, inFlight: number): void {
    this.#ttfb.observe(ttfbMs);
    if (this.#phase === 'learned') return;
    if (ttfbMs > this.#threshold()) {
      // One slow stream (a long prompt) is no queue; most of the last few being slow may be. The
      // backoff waits for the next scrape: first bytes that are late for a moment (the host's or
      // the router's own CPU busy with a connection ramp) halved the limit of idle engines, and
      // a joining replica took twice as long as the warm ones at p99.
      if (token >= this.#backoffBefore && !this.#ttfbOk()) this.#lateArmed = true;
      return;
    }
    // An engine that answers a stream this fast had a free batch slot for it.
    if (this.#phase === 'slow-start' && this.#busy(inFlight)) this.#move(this.#limit + 1, 'first-byte');
  }

  /**
   * A request ended. `unscraped`: the engine's metrics have never been read,
   * for a whole scrape max-age, so scrapes cannot pace growth; each success
   * while the limit is in use then adds one.
   */
  completed(inFlight: number, succeeded: boolean, unscraped: boolean): void {
    if (succeeded) this.#succeededSinceScrape++;
    if (unscraped && succeeded && this.#phase !== 'learned' && this.#busy(inFlight + 1) && this.#ttfbOk()) this.#move(this.#limit + 1, 'completions');
  }

  /**
   * A scrape arrived: the engine had `waiting` + `running` requests, `own` of
   * them surely this replica's (sent before the scrape began). `open` is
   * what this replica has open to the engine now. `learnedCapacity` is the
   * load view's (after this scrape), if any. `nextToken` is the number the
   * next request will get (late first bytes of earlier ones do not count
   * again after a backoff).
   */
  scraped(waiting: number, running: number, own: number, learnedCapacity: number | undefined, open: number, nextToken = 0): void {
    if (this.#lateArmed) {
      this.#lateArmed = false;
      // Late for a whole scrape interval, and no queue shown (which would have cut already): the
      // engine fell behind in a way its slot counts do not show (a prefill backlog).
      if (waiting === 0 && this.#phase !== 'learned' && !this.#ttfbOk()) {
        this.#move(Math.max(MIN_LIMIT, this.#limit * BACKOFF), 'late-first-bytes');
        this.#backoffBefore = nextToken;
        this.#phase = 'probing';
      }
    }
    const total = waiting + running;
    const share = total > 0 ? Math.min(1, own / total) : 1;
    const budget = this.#settings.queueBudget;
    if (waiting > 0) {
      // Full: it runs `running` and may queue the budget, shared by whoever sends to it. Only ever a
      // cut: the share is an estimate (requests on their way to or from the engine count as ours but
      // not as its), and a queue is never a reason to send more.
      this.#phase = 'learned';
      const whole = running + budget;
      this.#limit = Math.max(MIN_LIMIT, Math.min(this.#limit, own > 0 ? whole * share : whole));
      this.#reason = 'queue';
    }
    // A queue ends a quiet spell. A scrape that shows fewer requests than this replica has counted
    // at the engine (some are finished, their answers on the way) or follows an interval that did
    // not use the whole limit says nothing either way.
    if (waiting > 0) this.#quietScrapes = 0;
    else if (own <= total && this.#reached) this.#quietScrapes += this.#idleBefore && own === total ? QUIET_SCRAPES : 1;
    // Running without a queue is room the engine has shown: work that belongs there may use it. With
    // the replica count known, this replica's share of all the engine ran is room too, so a replica
    // that joins a busy fleet starts at its share instead of at the first limit; N fresh replicas
    // each see the others' first limits and take no more than their own. Without the count, only
    // its own requests are evidence: the rest may be other replicas'.
    if (waiting === 0) {
      const replicas = this.#settings.replicas?.value;
      this.#roomSeen = replicas === undefined ? Math.min(own, total) : running;
      if (replicas !== undefined && this.#phase !== 'learned') this.#move(Math.max(this.#limit, Math.floor(running / replicas)), 'replica-share');
    }
    // An engine that ran only this replica's requests, below its limit, and now runs only its
    // requests at the limit without a queue needs no second look.
    this.#idleBefore = waiting === 0 && own === total && !this.#reached;
    if (waiting === 0 && this.#reached && this.#quietScrapes >= QUIET_SCRAPES && this.#ttfbOk()) {
      // One quiet scrape can catch a full engine between a finished request and the next, or between
      // two waves of a burst (identical requests start and end together).
      // Grow from what the engine showed of ours, not from the limit: requests on their way to or
      // from it count against the limit but not as its load. Unless the engine holds fewer requests
      // than this replica alone has open, and none it surely had are missing (those would be answers
      // on their way back): an engine that answers faster than requests travel to it and back holds
      // only the few just sent, which no scrape can call ours, so growth from its count never comes
      // and the router holds a fast engine at its first limit. No queue
      // while the whole limit was in use is the evidence, as for any engine; a scrape that then shows
      // a queue hands over as usual. Only an engine that turned the whole limit over several times
      // since the last scrape is that fast: one that reads its requests late (a starved front end)
      // shows the same few, and those on the wire to it land in its queue: growing the limit there
      // overfills it.
      const onTheWire = own <= total && total < open && this.#succeededSinceScrape >= FAST_TURNOVER * this.#limit;
      const base = onTheWire ? this.#limit : Math.min(this.#limit, total * share);
      const grown =
        learnedCapacity === undefined
          ? Math.max(this.#limit, base * GROWTH, base + budget * share)
          : // Known capacity: step by this replica's share of the budget, up to its share of capacity + budget.
            Math.max(this.#limit, Math.min(base + budget * share, (learnedCapacity + budget) * share));
      this.#move(grown, 'quiet-scrape');
    }
    if (learnedCapacity !== undefined) this.#phase = 'learned';
    this.#reached = false;
    this.#succeededSinceScrape = 0;
  }

  /** Sets the limit to `limit`; a change records `reason`. */
  #move(limit: number, reason: SafeStartReason): void {
    if (limit === this.#limit) return;
    this.#limit = limit;
    this.#reason = reason;
  }

  /** At least half the limit is in use: otherwise the traffic, not the engine, is what limits, and nothing was learned. */
  #busy(inFlight: number): boolean {
    return inFlight * 2 >= this.value;
  }

  #threshold(): number {
    return (this.#ttfb.baselineMs ?? Number.POSITIVE_INFINITY) * this.#settings.ttfbTolerance + TTFB_SLACK_MS;
  }

  #ttfbOk(): boolean {
    const recent = this.#ttfb.recentMs;
    return recent === undefined || this.#phase === 'learned' || recent <= this.#threshold();
  }
}

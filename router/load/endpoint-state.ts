/**
 * Live state of one endpoint: what its source says, what the router is doing
 * with it, what its engine last reported, and whether it is ejected.
 *
 * The state owns its bookkeeping, in parts that each keep their own books:
 * identity (endpoint-identity.ts), the in-flight ledger (in-flight-ledger.ts),
 * the scrape and fleet counts (reported-load.ts), answer times
 * (answer-times.ts), health and ejection (endpoint-health.ts), the safe start
 * (safe-start.ts) and the memo of derived values (derived-load.ts). This class
 * wires them: everything is readable from outside and nothing is writable;
 * every change is a method named after what happened (a request began or
 * settled, a scrape began or arrived, the source re-described the endpoint,
 * it departed), and it tells each part that needs to know, so the counters
 * that must move together can only move together. The load view, which owns
 * the clock and the set, is the one caller of those methods; scheduling,
 * admission, metrics and debug views only read ({@link EndpointView}).
 */
import type { Endpoint } from '../../discovery/endpoint.ts';
import { AnswerTimes } from './answer-times.ts';
import { DerivedLoad } from './derived-load.ts';
import type { EjectionCensus } from './ejection.ts';
import { EndpointAttributes } from './endpoint-attributes.ts';
import { EndpointHealth } from './endpoint-health.ts';
import { EndpointIdentity } from './endpoint-identity.ts';
import type { EndpointView } from './endpoint-view.ts';
import type { ModelGauges } from './exposition-scanner.ts';
import { InFlightLedger } from './in-flight-ledger.ts';
import type { LoadClockAndSettings } from './load-clock.ts';
import { ReportedLoad, type FleetShare, type ScrapedLoad } from './reported-load.ts';
import { SafeStartLimit, type FleetSafeStartRecord, type SafeStartPhase } from './safe-start.ts';
import type { UpstreamFailureKind } from './upstream-failure-kinds.ts';

/** What others may read of the safe-start limit (its inputs come only through the state). */
export type SafeStartReadout = Pick<SafeStartLimit, 'value' | 'exact' | 'phase' | 'status' | 'burstBound'>;

/**
 * One endpoint's live state (see the header): created, told what happens and
 * dropped by the load view; read by everyone else. Members of
 * {@link EndpointView} are documented there.
 */
export class EndpointState implements EndpointView {
  readonly #identity: EndpointIdentity;
  readonly #ledger = new InFlightLedger();
  readonly #reported: ReportedLoad;
  readonly #answers = new AnswerTimes();
  readonly #health: EndpointHealth;
  readonly #safeStart: SafeStartLimit | undefined;
  readonly #derived: DerivedLoad;
  readonly #view: LoadClockAndSettings;
  readonly #attributes = new EndpointAttributes();

  /** `view` is the load view's clock and settings, read (never written) for every derived value. */
  constructor(endpoint: Endpoint, view: LoadClockAndSettings) {
    this.#view = view;
    this.#identity = new EndpointIdentity(endpoint);
    this.#reported = new ReportedLoad(view);
    this.#health = new EndpointHealth(view);
    this.#safeStart = view.safeStart?.enabled === true ? new SafeStartLimit(view.safeStart) : undefined;
    this.#derived = new DerivedLoad(this.#identity, this.#ledger, this.#reported, view);
  }

  get endpoint(): Endpoint {
    return this.#identity.endpoint;
  }
  get id(): string {
    return this.#identity.endpoint.id;
  }
  /** `scheme://host:port` of the endpoint, for the HTTP client. */
  get origin(): string {
    return this.#identity.origin;
  }
  /** Path prefix of the endpoint's base URL ('' for none), prepended to request paths. */
  get basePath(): string {
    return this.#identity.basePath;
  }
  get idHash(): number {
    return this.#identity.idHash;
  }
  get present(): boolean {
    return this.#identity.present;
  }
  get routable(): boolean {
    return this.#identity.routable;
  }
  get attributes(): EndpointAttributes {
    return this.#attributes;
  }
  /** Epoch ms the endpoint joined the set. */
  get firstSeenAt(): number {
    return this.#reported.firstSeenAt;
  }

  /** The source described the endpoint again (it stays in the set). */
  describe(endpoint: Endpoint): void {
    this.#identity.describe(endpoint);
  }

  /** The endpoint left the set. Requests still open to it settle here; nothing routes to it again. */
  depart(): void {
    this.#identity.depart();
  }

  get inFlight(): number {
    return this.#ledger.inFlight;
  }
  /** Requests sent since the last scrape that are still open. */
  get sentSinceScrape(): number {
    return this.#ledger.sentSinceScrape;
  }
  /** Requests open at the last scrape that have finished since. */
  get doneSinceScrape(): number {
    return this.#ledger.doneSinceScrape;
  }
  /** A scrape began after the last one recorded (and may still be out, or have failed). */
  get awaitingScrape(): boolean {
    return this.#ledger.awaitingScrape;
  }

  /**
   * A request was sent at the view's clock. Returns its token for
   * {@link firstByte} and {@link settle}; pair every begin with exactly one settle.
   */
  begin(): number {
    const token = this.#ledger.begin(this.#view.now);
    this.#safeStart?.sent(this.#ledger.inFlight);
    return token;
  }

  /** The first response byte of stream `token` arrived `ttfbMs` after it was sent: how fast the engine starts new work. */
  firstByte(token: number, ttfbMs: number): void {
    this.#answers.firstByte(ttfbMs);
    this.#safeStart?.firstByte(token, ttfbMs, this.#ledger.inFlight);
  }

  get firstByteMs(): number | undefined {
    return this.#answers.firstByteMs;
  }

  /**
   * Request `token` ended at `now` (epoch ms); `failure` is set when the
   * engine failed it (never for a client that went away or a request the
   * router refused). `census` is the set, asked how many endpoints are
   * ejected only when this failure could eject one more. Returns true when
   * the failure ejected the endpoint. The caller has ticked the view's clock
   * when the endpoint has a safe start (it reads {@link unscraped}).
   * `serviceMs` is how long a complete successful answer took, send to last
   * byte (undefined for failed and abandoned ones).
   */
  settle(token: number, now: number, failure: UpstreamFailureKind | undefined, census: EjectionCensus, serviceMs?: number): boolean {
    this.#ledger.settle(token);
    this.#answers.settled(now, serviceMs);
    this.#safeStart?.completed(this.#ledger.inFlight, failure === undefined, this.#reported.unscraped);
    return this.#health.settled(failure, now, census);
  }

  /** Moving average of upstream failures per request, 0-1. */
  get errorRate(): number {
    return this.#health.errorRate;
  }
  /** Failures since the last success. */
  get consecutiveFailures(): number {
    return this.#health.consecutiveFailures;
  }
  /** Epoch ms of the last failure, if any. */
  get lastFailureAt(): number | undefined {
    return this.#health.lastFailureAt;
  }
  /** How the last failure failed, if any. */
  get lastFailureKind(): UpstreamFailureKind | undefined {
    return this.#health.lastFailureKind;
  }
  /** Ejected from routing until this epoch ms (0: never ejected). */
  get ejectedUntil(): number {
    return this.#health.ejectedUntil;
  }
  /** Ejections so far; the next lasts longer. Reset after a long healthy spell. */
  get ejections(): number {
    return this.#health.ejections;
  }
  /** Epoch ms the last ejection began (0: never ejected). */
  get lastEjectedAt(): number {
    return this.#health.lastEjectedAt;
  }
  get ejected(): boolean {
    return this.#health.ejected;
  }

  get scraped(): ScrapedLoad | undefined {
    return this.#reported.scraped;
  }
  /** Highest `running` seen while the engine had a queue: it was full then. */
  get learnedCapacity(): number | undefined {
    return this.#reported.learnedCapacity;
  }
  get stale(): boolean {
    return this.#reported.stale;
  }
  /**
   * Not one successful scrape in longer than a scrape stays fresh since the
   * endpoint joined: its metrics cannot be read (not vLLM's, or blocked).
   * Scrapes that worked and then failed do not count: the load they showed
   * still holds what was learned.
   */
  get unscraped(): boolean {
    return this.#reported.unscraped;
  }
  get scrapeAgeMs(): number {
    return this.#reported.scrapeAgeMs;
  }
  get kvCacheUsage(): number {
    return this.#reported.kvCacheUsage;
  }
  /** Requests the other router replicas have open to this endpoint, as last read from the shared state (0 without it). */
  get othersInFlight(): number {
    return this.#reported.othersInFlight;
  }

  /** See EndpointView.fleetShare. */
  get fleetShare(): FleetShare | undefined {
    return this.#reported.fleetShare;
  }

  /**
   * The shared state says the other replicas have `count` requests open to
   * this endpoint (0 when it no longer knows: Redis degraded, the counts
   * expired). `seats`: another replica has requests waiting in its router
   * queue for a model this endpoint serves, and `seats.replicas` share the
   * engine, this one ranked `seats.rank` among them; each engine rotates the
   * seats by its id hash, so the rounding's extra request falls to a
   * different replica at each engine.
   */
  fleetInFlight(count: number, otherReplicas: number, seats?: { readonly replicas: number; readonly rank: number }): void {
    const share = seats === undefined || seats.replicas < 2 ? undefined : { replicas: seats.replicas, seat: (seats.rank + this.#identity.idHash) % seats.replicas };
    this.#reported.fleetInFlight(count, otherReplicas, this.#ledger.inFlight, share);
  }

  /** The shared counts are gone (Redis degraded): the scrape's share of them is forgotten too. */
  forgetFleet(): void {
    this.#reported.forgetFleet();
  }

  /**
   * A scrape of the engine is about to be sent at `now` (epoch ms). Requests
   * sent from now on may or may not reach the engine before it answers: the
   * scrape's own numbers will say how many it counted (see {@link recordScrape}).
   */
  markScrapeStart(now: number): void {
    this.#ledger.markScrapeStart(now);
  }

  /**
   * A scrape of the engine succeeded at `now` (epoch ms): gauges summed over
   * the models it serves, KV-cache usage as the highest. Requests sent before
   * the scrape began are now counted by the engine itself.
   * `queueWaitsElsewhere`: its queue waits for something other than a batch
   * slot (a LoRA adapter slot), so no capacity is learned from it.
   */
  recordScrape(models: ReadonlyMap<string, ModelGauges>, now: number, queueWaitsElsewhere = false): void {
    const { waiting, running } = this.#reported.scrapeArrived(models, now, queueWaitsElsewhere);
    const surelyCounted = this.#ledger.scrapeArrived(waiting + running - this.#reported.othersInFlight);
    // What the scrape surely counted of ours: open requests sent before it began. Not the ambiguous
    // ones the engine's count was taken to include: with others sending unseen that split can be
    // wrong, and the limit grows from this share (three cold replicas overfilled 8-slot engines'
    // queues to 6-9 of a budget of 5 in `bench cold-start` when it included them).
    this.#safeStart?.scraped(waiting, running, surelyCounted, this.#reported.learnedCapacity, this.#ledger.inFlight, this.#ledger.sentTotal);
  }

  get capacity(): number | undefined {
    return this.#derived.capacity;
  }
  get estimatedWaiting(): number {
    return this.#derived.estimatedWaiting;
  }
  get queuedBySend(): number {
    return this.#derived.queuedBySend;
  }
  get loadScore(): number {
    return this.#derived.loadScore;
  }
  get queueAllowance(): number {
    return this.#answers.queueAllowance(this.#derived.capacity);
  }
  drainRate(now: number): number {
    return this.#answers.drainRate(now, this.#ledger.inFlight, this.#derived.capacity, this.#replicas);
  }

  /** Router replicas sharing the engine: the live ones the shared state names, else the counted or configured count; undefined when unknown. */
  get #replicas(): number | undefined {
    return this.#reported.fleetHeld ? this.#reported.otherReplicas + 1 : this.#view.replicas?.value;
  }
  /** Mean time (ms) of complete successful answers, send to last byte, once one was seen. */
  get serviceMs(): number | undefined {
    return this.#answers.serviceMs;
  }

  /** The safe-start limit (see safe-start.ts), if enabled; in force only while no capacity is configured. */
  get safeStart(): SafeStartReadout | undefined {
    return this.#safeStart;
  }
  get concurrencyLimit(): number | undefined {
    return this.#identity.endpoint.capacity === undefined ? this.#safeStart?.value : undefined;
  }
  /** The safe-start limit held this replica back since the last scrape: scrape sooner (see {@link SafeStartLimit.awaitsEvidence}). */
  get awaitsEvidence(): boolean {
    return this.#identity.endpoint.capacity === undefined && this.#safeStart?.awaitsEvidence === true;
  }
  get safeStartPhase(): SafeStartPhase | undefined {
    return this.#identity.endpoint.capacity === undefined ? this.#safeStart?.phase : undefined;
  }
  get burstBound(): number | undefined {
    return this.#identity.endpoint.capacity === undefined ? this.#safeStart?.burstBound : undefined;
  }

  /** What this replica shares of the endpoint's safe start with the fleet; undefined when no limit applies (capacity configured, safe start off). */
  get safeStartRecord(): { readonly limit: number; readonly learnedCapacity: number | undefined } | undefined {
    if (this.#safeStart === undefined || this.#identity.endpoint.capacity !== undefined) return undefined;
    return { limit: this.#safeStart.exact, learnedCapacity: this.#reported.learnedCapacity };
  }

  /** The other live replicas' safe start for this endpoint (see router/state/fleet-safe-start.ts): adopt their capacity, share their limit. */
  shareSafeStart(record: FleetSafeStartRecord): void {
    if (this.#safeStart === undefined || this.#identity.endpoint.capacity !== undefined) return;
    if (record.learnedCapacity !== undefined && this.#reported.adoptCapacity(record.learnedCapacity)) this.#safeStart.capacityLearnedByFleet();
    this.#safeStart.shareWithFleet(record.limits, record.replicas);
  }
}

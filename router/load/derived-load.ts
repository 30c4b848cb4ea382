/**
 * The derived load of one endpoint (estimated waiting, queued by a send, load
 * score; load-formulas.ts), computed once per clock tick and change: a
 * routing decision reads them for every candidate, several times. The
 * inputs live in three parts of the endpoint's state; each counts its own
 * changes, and as those counts only grow, any change changes their sum, so
 * the memo compares one number and allocates nothing.
 */
import type { EndpointIdentity } from './endpoint-identity.ts';
import type { InFlightLedger } from './in-flight-ledger.ts';
import type { LoadClockAndSettings } from './load-clock.ts';
import { estimatedWaiting, loadScore, outstanding, queuedBySend, type LoadInputs } from './load-formulas.ts';
import type { ReportedLoad } from './reported-load.ts';

/**
 * Requests this replica must have opened to an engine since the last fleet
 * read to be in a burst, where the other replicas are taken to be sending
 * there as it does (FleetMirroring `burst`, load-clock.ts). Replicas behind one
 * Service get a burst in the same milliseconds, each seeing the same room
 * until the next read (a publish interval later) shows the others' sends.
 * In a steady stream a replica opens one request at an engine between
 * reads, or none, and the read already holds what the others have open:
 * mirroring every send there held each engine two slots short with three
 * replicas, and the routers queued what the engines could have run
 * (least-load at 85%: TTFT p99 875 ms against one router's 103).
 */
export const BURST_RISE = 2;

/** One endpoint's derived-load memo over its identity, ledger and reported load, which it only reads. */
export class DerivedLoad {
  readonly #identity: EndpointIdentity;
  readonly #ledger: InFlightLedger;
  readonly #reported: ReportedLoad;
  readonly #view: LoadClockAndSettings;
  readonly #inputs: { -readonly [K in keyof LoadInputs]: LoadInputs[K] } = {
    scraped: undefined,
    sentSinceScrape: 0,
    doneSinceScrape: 0,
    inFlight: 0,
    othersInFlight: 0,
    othersAtScrape: 0,
    othersDrift: 0,
    mirroringOthers: 0,
    capacity: undefined,
    unseenReplicas: 0,
  };
  #memoVersion = -1;
  #memoNow = Number.NaN;
  #estimatedWaiting = 0;
  #queuedBySend = 0;
  #loadScore = 0;

  constructor(identity: EndpointIdentity, ledger: InFlightLedger, reported: ReportedLoad, view: LoadClockAndSettings) {
    this.#identity = identity;
    this.#ledger = ledger;
    this.#reported = reported;
    this.#view = view;
  }

  /** Max concurrent sequences: from the source, else learned at saturation, else unknown. */
  get capacity(): number | undefined {
    return this.#identity.endpoint.capacity ?? this.#reported.learnedCapacity;
  }

  /** See {@link estimatedWaiting}. */
  get estimatedWaiting(): number {
    this.#refresh();
    return this.#estimatedWaiting;
  }

  /** See {@link queuedBySend}. */
  get queuedBySend(): number {
    this.#refresh();
    return this.#queuedBySend;
  }

  /** See {@link loadScore}. */
  get loadScore(): number {
    this.#refresh();
    return this.#loadScore;
  }

  #refresh(): void {
    const reported = this.#reported;
    const ledger = this.#ledger;
    const version = this.#identity.version + ledger.version + reported.version;
    if (this.#memoVersion === version && this.#memoNow === this.#view.now) return;
    const inputs = this.#inputs;
    inputs.scraped = reported.stale ? undefined : reported.scraped;
    inputs.sentSinceScrape = ledger.sentSinceScrape;
    inputs.doneSinceScrape = ledger.doneSinceScrape;
    inputs.inFlight = ledger.inFlight;
    inputs.othersInFlight = reported.othersInFlight;
    inputs.othersAtScrape = reported.othersAtScrape;
    // Between fleet reads the others are taken to send as this replica does (see LoadInputs.othersDrift):
    // always, or in a burst the read has not shown (FleetMirroring).
    const rise = ledger.inFlight - reported.ownAtFleetRead;
    const always = this.#view.fleetMirroring !== 'burst';
    const mirrored = reported.fleetHeld && (always || rise >= BURST_RISE);
    inputs.mirroringOthers = mirrored ? reported.otherReplicas : 0;
    inputs.othersDrift = inputs.mirroringOthers * rise;
    const previous = reported.previousFleetRead;
    if (mirrored && always && previous !== undefined) {
      // The others' counts may predate the last read by a publish interval: mirrored from the read
      // before, they are taken to have opened at least as many as this replica since then.
      const sincePrevious = previous.others - reported.othersInFlight + inputs.mirroringOthers * (ledger.inFlight - previous.own);
      inputs.othersDrift = Math.max(inputs.othersDrift, sincePrevious);
    }
    inputs.capacity = this.capacity;
    inputs.unseenReplicas = reported.fleetHeld ? 0 : Math.max(0, (this.#view.replicas?.value ?? 1) - 1);
    const work = outstanding(inputs);
    this.#estimatedWaiting = estimatedWaiting(inputs, work);
    this.#queuedBySend = queuedBySend(inputs, work);
    this.#loadScore = loadScore(inputs, this.#view.defaultCapacity, work);
    this.#memoVersion = version;
    this.#memoNow = this.#view.now;
  }
}

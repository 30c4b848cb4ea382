/**
 * The clock and settings every endpoint's state reads. The load view owns
 * the one instance, ticks its clock before each batch of reads and hands it
 * to each state it creates; the states and their parts only read it, so a
 * routing decision sees one time across all candidates.
 */
import type { EjectionSettings } from './ejection.ts';
import type { ReplicaCountReader } from './replica-count.ts';
import type { SafeStartSettings } from './safe-start.ts';

/** View-wide settings the derived values depend on; the load view owns and ticks it. */
export interface LoadClockAndSettings {
  /** Epoch ms, refreshed by the view before each routing decision. */
  readonly now: number;
  /** A scrape older than this is stale (ms). */
  readonly maxScrapeAgeMs: number;
  /** Capacity assumed for load-score normalisation when unknown (sequences). */
  readonly defaultCapacity: number;
  /** The safe start for endpoints of unknown capacity; undefined: none. */
  readonly safeStart?: SafeStartSettings | undefined;
  /** Router replicas sharing the engines (counted or configured; see replica-count.ts); undefined: unknown. */
  readonly replicas?: ReplicaCountReader | undefined;
  /** Outlier ejection tuning. */
  readonly ejection: EjectionSettings;
  /** When the other replicas are taken to send as this one does between fleet reads (see {@link FleetMirroring}); absent: `always`. */
  readonly fleetMirroring?: FleetMirroring | undefined;
}

/**
 * When a replica takes the others to send as it does between fleet reads:
 * `always`, or only in a `burst` the read has not shown
 * (router/load/derived-load.ts `BURST_RISE`). A configured
 * `admission.maxWaiting` is a bound the fleet keeps at every engine, so it
 * is `always`; each engine's adaptive allowance is the queue that keeps its
 * slots busy between refills, and there `burst`: in a steady stream the read
 * already holds what the others have open, and mirroring every send held
 * each engine two slots short.
 */
export type FleetMirroring = 'always' | 'burst';

/**
 * The one load bound that decides when affinity yields to load. An affinity
 * walk (session keys, prompt prefixes) takes the first candidate in its
 * deterministic order whose load score is at most
 *
 *   max(floor, (1 + epsilon + kappa × credit) × mean load score)
 *
 * `credit` (0-1) says how much cached work the candidate holds for this
 * request: a pod that holds a long conversation may run hotter before the
 * conversation leaves it, since a miss re-computes the whole history. The
 * floor keeps a conversation home while its pod has free batch slots (a load
 * score under 0.5) however idle the rest are. Prefix walks hold it only for a
 * candidate with credit: a prompt nothing is cached for has no reason to
 * stay on a busier engine, and on an engine whose prefill is backed up (which
 * its slot counts do not show) a new prompt only queues. Because the bound depends only
 * on the load view and the request, every replica that sees the same load
 * makes the same choice; the shared fleet-wide load makes that true across
 * replicas too.
 */

/** The bound's settings. */
export interface LoadBound {
  /** Headroom over the mean for any candidate (≥ 0). */
  readonly epsilon: number;
  /** Extra headroom per unit of cache credit (≥ 0). */
  readonly kappa: number;
  /** Load score under which affinity never yields. */
  readonly floor: number;
  /** The floor holds only for a candidate with cache credit. */
  readonly creditFloorOnly?: boolean;
}

/** A pod under this load score has free batch slots: keeping its conversations there wins. */
export const BALANCE_FLOOR = 0.5;

/** Highest load score a candidate with `credit` may have and still be taken by an affinity walk. */
export function loadLimit(bound: LoadBound, meanLoad: number, credit: number): number {
  const limit = (1 + bound.epsilon + bound.kappa * credit) * meanLoad;
  return bound.creditFloorOnly && credit === 0 ? limit : Math.max(bound.floor, limit);
}

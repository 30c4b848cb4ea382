/**
 * Which router replicas are alive, as the fleet-load publisher last read it
 * from Redis: each replica publishes a heartbeat with its counts, and one
 * that stops publishing (killed, partitioned) drops out after its TTL.
 * Quotas divide and sum by it; the fleet load sums over it.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

/** The replicas alive at the last fleet read. */
export interface FleetMembership {
  /** This replica's id: unique per process (a restarted pod is a new replica). */
  readonly replicaId: string;
  /** Ids of the replicas alive at the last successful read, this one included (just this one before any). */
  liveReplicaIds(): readonly string[];
  /**
   * Live replicas at the last successful read, this one included; kept
   * through a Redis outage, so degraded limits divide by the count last
   * seen before Redis went away.
   */
  liveReplicaCount(): number;
}

/** A replica id: the host name (the pod name in Kubernetes) and 6 random bytes, so a restart is a new replica. */
export function newReplicaId(): string {
  return `${hostname().slice(0, 64)}-${randomBytes(6).toString('hex')}`;
}

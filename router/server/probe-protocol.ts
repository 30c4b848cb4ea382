/**
 * What the main thread and the admin-port worker share: the slots of the
 * shared state array, and the messages that carry non-probe admin requests.
 */

/** Slots of the shared BigInt64Array. */
export const PROBE_STATE = {
  /** Epoch ms of the main thread's last heartbeat. */
  heartbeat: 0,
  /** 1 once discovery produced its first endpoint set. */
  synced: 1,
  /** 1 once draining began. */
  draining: 2,
  /** Shared state: 0 off, 1 up, 2 degraded (shown in /readyz, never counted). */
  sharedState: 3,
} as const;

/** Slots in the shared array. */
export const PROBE_STATE_SLOTS = 4;

/** {@link PROBE_STATE}.sharedState values, by slot value. */
export const SHARED_STATE_CODES = ['off', 'up', 'degraded'] as const;

/** Startup data of the worker. */
export interface ProbeWorkerData {
  readonly host: string;
  readonly port: number;
  /** SharedArrayBuffer behind a BigInt64Array of {@link PROBE_STATE_SLOTS} slots. */
  readonly state: SharedArrayBuffer;
  /** `/livez` fails once the main thread's heartbeat is older than this (ms). */
  readonly livenessStallMs: number;
  /**
   * SHA-256 of the admin token (see admin-auth.ts): every path but the probes
   * then needs it. Undefined: no token, every path open.
   */
  readonly tokenSha256: Uint8Array | undefined;
  /** Open admin connections at most (see admin-connections.ts); already fitted to the open-file limit. */
  readonly maxConnections: number;
}

/** An admin request the worker hands to the main thread. */
export interface AdminRequestMessage {
  readonly id: number;
  readonly method: string;
  readonly url: string;
}

/** The main thread's answer. */
export interface AdminResponseMessage {
  readonly id: number;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: ArrayBuffer;
}

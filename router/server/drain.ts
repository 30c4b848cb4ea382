/**
 * The SIGTERM drain, as the design's contract table states it.
 * Readiness fails at once; the router keeps serving for the pre-stop delay
 * (so endpoint removal propagates to every client of the Service), then stops
 * accepting, lets in-flight requests finish up to the drain deadline, closes
 * idle keep-alive sockets, and resolves so the process can exit 0.
 */
import type { Server } from 'node:http';
import type { Logger } from '../log.ts';

/** What draining needs to observe and close. */
export interface DrainTargets {
  readonly traffic: Server;
  /** Requests still open on the traffic port. */
  inFlight(): number;
  readonly logger: Logger;
}

/** Drain timing, in milliseconds. */
export interface DrainTiming {
  readonly preStopDelayMs: number;
  readonly drainTimeoutMs: number;
}

const POLL_MS = 50;

/** Runs the drain and holds its state, which readiness and the traffic listener read. */
export class Drain {
  #draining = false;
  #closing = false;

  /** SIGTERM arrived: readiness fails. */
  get draining(): boolean {
    return this.#draining;
  }

  /** The traffic listener stopped accepting: responses close their connections. */
  get closing(): boolean {
    return this.#closing;
  }

  /**
   * Runs the whole drain. Resolves once in-flight requests finished or the
   * deadline passed; the caller then closes the rest and exits 0.
   */
  async run(targets: DrainTargets, timing: DrainTiming): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    const { logger, traffic } = targets;
    logger.info({ preStopDelayMs: timing.preStopDelayMs }, 'draining: readiness now fails; still serving during the pre-stop delay');
    await sleep(timing.preStopDelayMs);
    this.#closing = true;
    traffic.close();
    traffic.closeIdleConnections();
    logger.info({ inFlight: targets.inFlight(), drainTimeoutMs: timing.drainTimeoutMs }, 'draining: stopped accepting connections');
    const deadline = performance.now() + timing.drainTimeoutMs;
    while (targets.inFlight() > 0 && performance.now() < deadline) {
      traffic.closeIdleConnections();
      await sleep(POLL_MS);
    }
    const left = targets.inFlight();
    if (left > 0) logger.warn({ inFlight: left }, 'draining: deadline passed with requests still open; closing them');
    traffic.closeAllConnections();
    logger.info('draining: done');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

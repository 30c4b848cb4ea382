/**
 * A circuit breaker for the shared store: after `failures` consecutive
 * failed commands it opens, and Redis is not asked at all for `openMs`;
 * then one trial command is let through (half-open). Its success closes the
 * breaker; its failure opens it again. While Redis is paused or slow this is
 * what keeps requests from each waiting out a command timeout.
 */

import type { BreakerState } from '../metrics/label-values.ts';

export type { BreakerState };

/** Breaker tuning. */
export interface BreakerSettings {
  /** Consecutive failures that open the breaker. */
  readonly failures: number;
  /** How long it stays open before a trial (ms). */
  readonly openMs: number;
}

export class CircuitBreaker {
  readonly #settings: BreakerSettings;
  readonly #now: () => number;
  #state: BreakerState = 'closed';
  #consecutiveFailures = 0;
  #openedAt = 0;
  #trialOut = false;
  /** Told of every state change; must not throw. */
  onTransition: ((to: BreakerState) => void) | undefined;

  constructor(settings: BreakerSettings, now: () => number = Date.now) {
    this.#settings = settings;
    this.#now = now;
  }

  get state(): BreakerState {
    return this.#state;
  }

  /**
   * True when a command may be sent now. In the half-open state only one
   * trial is out at a time; the caller must report its outcome.
   */
  allow(): boolean {
    if (this.#state === 'closed') return true;
    if (this.#state === 'open') {
      if (this.#now() - this.#openedAt < this.#settings.openMs) return false;
      this.#move('half-open');
    }
    if (this.#trialOut) return false;
    this.#trialOut = true;
    return true;
  }

  /** A command that {@link allow} let through succeeded. */
  succeeded(): void {
    this.#consecutiveFailures = 0;
    this.#trialOut = false;
    if (this.#state !== 'closed') this.#move('closed');
  }

  /** A command that {@link allow} let through failed (timeout, connection, server error). */
  failed(): void {
    this.#trialOut = false;
    this.#consecutiveFailures++;
    if (this.#state === 'half-open' || (this.#state === 'closed' && this.#consecutiveFailures >= this.#settings.failures)) {
      this.#openedAt = this.#now();
      this.#move('open');
    }
  }

  #move(to: BreakerState): void {
    this.#state = to;
    this.onTransition?.(to);
  }
}

/**
 * One endpoint's health as the router's own requests show it: the error
 * rate, the failure streak, and the ejection record that ejection.ts
 * decides on. Only requests the engine failed count against it (never a
 * client that went away or a request the router refused).
 */
import { ejectionLength, nextEjection, type EjectionCensus, type EjectionRecord } from './ejection.ts';
import type { LoadClockAndSettings } from './load-clock.ts';
import type { UpstreamFailureKind } from './upstream-failure-kinds.ts';

/** Weight of the newest outcome in the error-rate moving average. */
const ERROR_RATE_ALPHA = 0.1;

/** One endpoint's failure and ejection record; told of every settled request by its endpoint state. */
export class EndpointHealth implements EjectionRecord {
  #errorRate = 0;
  #consecutiveFailures = 0;
  #lastFailureAt: number | undefined;
  #lastFailureKind: UpstreamFailureKind | undefined;
  #ejectedUntil = 0;
  #ejections = 0;
  #lastEjectedAt = 0;
  readonly #view: LoadClockAndSettings;

  /** `view` is read (never written) for the clock and the ejection settings. */
  constructor(view: LoadClockAndSettings) {
    this.#view = view;
  }

  /** Moving average of upstream failures per request, 0-1. */
  get errorRate(): number {
    return this.#errorRate;
  }

  /** Failures since the last success. */
  get consecutiveFailures(): number {
    return this.#consecutiveFailures;
  }

  /** Epoch ms of the last failure, if any. */
  get lastFailureAt(): number | undefined {
    return this.#lastFailureAt;
  }

  /** How the last failure failed, if any. */
  get lastFailureKind(): UpstreamFailureKind | undefined {
    return this.#lastFailureKind;
  }

  /** Ejected from routing until this epoch ms (0: never ejected). */
  get ejectedUntil(): number {
    return this.#ejectedUntil;
  }

  /** Ejections so far; the next lasts longer. Reset after a long healthy spell. */
  get ejections(): number {
    return this.#ejections;
  }

  /** Epoch ms the last ejection began (0: never ejected). */
  get lastEjectedAt(): number {
    return this.#lastEjectedAt;
  }

  /** True while ejected after repeated failures, at the view's clock. */
  get ejected(): boolean {
    return this.#ejectedUntil > this.#view.now;
  }

  /**
   * A request ended at `now` (epoch ms): in a success (`failure` undefined)
   * or an engine failure of that kind. `census` is asked how many endpoints
   * are ejected only when this failure could eject one more. Returns true
   * when the failure ejected the endpoint.
   */
  settled(failure: UpstreamFailureKind | undefined, now: number, census: EjectionCensus): boolean {
    this.#errorRate += ERROR_RATE_ALPHA * ((failure === undefined ? 0 : 1) - this.#errorRate);
    if (failure === undefined) {
      // One success readmits fully: an endpoint back from ejection on probation is off it.
      this.#consecutiveFailures = 0;
      return false;
    }
    return this.#failed(failure, now, census);
  }

  #failed(kind: UpstreamFailureKind, now: number, census: EjectionCensus): boolean {
    this.#consecutiveFailures++;
    this.#lastFailureAt = now;
    this.#lastFailureKind = kind;
    const settings = this.#view.ejection;
    const ordinal = nextEjection(this, kind, now, settings, census);
    if (ordinal === 0) return false;
    this.#ejections = ordinal;
    this.#lastEjectedAt = now;
    this.#ejectedUntil = now + ejectionLength(ordinal, settings);
    // Back in after the interval on probation: the next failure ejects again, a success clears it.
    this.#consecutiveFailures = settings.consecutiveFailures - 1;
    return true;
  }
}

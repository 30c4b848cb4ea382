/**
 * How fast one engine answers this replica: the mean time of complete
 * successful answers and the completions per second, which size the
 * engine's queue allowance and the Retry-After of a shed request, and the
 * mean time to first byte, which bounds how long a request waits for its
 * own engine's next free slot.
 */
import { CompletionRate } from './completion-rate.ts';

/**
 * How long (ms) the router takes to refill a batch slot the engine freed:
 * from the answer's last byte reaching it, through dispatching the next
 * queued request, to that request reaching the engine. A queue the engine
 * drains in this time keeps it from idling meanwhile; anything longer only
 * makes requests wait at the engine instead of in the router's queue, where
 * priorities and deadlines apply.
 */
const REFILL_MS = 2;
/** Weight of the newest answer in the service-time and first-byte averages. */
const SERVICE_ALPHA = 0.1;

/** One endpoint's answer times; told of every settled request by its endpoint state. */
export class AnswerTimes {
  /** Moving average of complete successful answers' durations (ms), from send to last byte. */
  #serviceMs: number | undefined;
  /** Moving average of successful answers' time to first byte (ms). */
  #firstByteMs: number | undefined;
  readonly #completions = new CompletionRate();

  /** Mean time (ms) of complete successful answers, send to last byte, once one was seen. */
  get serviceMs(): number | undefined {
    return this.#serviceMs;
  }

  /** Mean time (ms) from send to a successful answer's first byte, once one was seen. */
  get firstByteMs(): number | undefined {
    return this.#firstByteMs;
  }

  /** A successful answer's first byte came `ms` after its request was sent. */
  firstByte(ms: number): void {
    this.#firstByteMs = this.#firstByteMs === undefined ? ms : this.#firstByteMs + SERVICE_ALPHA * (ms - this.#firstByteMs);
  }

  /** A request ended at `now` (epoch ms); `serviceMs` is set for a complete successful answer. */
  settled(now: number, serviceMs: number | undefined): void {
    this.#completions.record(now);
    if (serviceMs !== undefined) this.#serviceMs = this.#serviceMs === undefined ? serviceMs : this.#serviceMs + SERVICE_ALPHA * (serviceMs - this.#serviceMs);
  }

  /** See EndpointView.queueAllowance; `capacity` is the engine's, configured or learned. */
  queueAllowance(capacity: number | undefined): number {
    if (capacity === undefined || this.#serviceMs === undefined || this.#serviceMs <= 0) return 0;
    return Math.floor((capacity / this.#serviceMs) * REFILL_MS);
  }

  /**
   * See EndpointView.drainRate; `inFlight` is this replica's open requests
   * to the engine, `capacity` the engine's (configured or learned) and
   * `replicas` the router replicas sharing it, when known.
   */
  drainRate(now: number, inFlight: number, capacity?: number, replicas?: number): number {
    const recent = this.#completions.at(now);
    if (this.#serviceMs === undefined || this.#serviceMs <= 0) return recent;
    // A full engine finishes `capacity` requests per answer time, and replicas that take turns at it
    // share that evenly. What this replica happened to finish or have open is one draw of that
    // share: three replicas sizing their queue gates by it shed up to a tenth of a burst that one
    // router served whole.
    const share = capacity === undefined || replicas === undefined ? 0 : (capacity * 1000) / this.#serviceMs / Math.max(1, replicas);
    return Math.max(recent, (inFlight * 1000) / this.#serviceMs, share);
  }
}

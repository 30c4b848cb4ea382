/**
 * The generic cell rate algorithm (GCRA) as one pure step, in milliseconds.
 * The shared quota script (quota-script.ts) runs the same step in Lua on
 * Redis' clock; this one serves the local limiter, so a tenant sees the same
 * arithmetic, and the same `x-ratelimit-*` numbers, whichever side decided.
 *
 * A tenant allowed `rate` requests per second with a burst of `burst` has an
 * emission interval T = 1000 / rate ms and one number of state: the
 * theoretical arrival time (TAT) of its next request. A request at `now` is
 * allowed when `max(TAT, now) + T - burst·T <= now`; allowing it moves TAT
 * on by T. So at most `burst` requests pass at once, then one per T: over a
 * window of W seconds at most `burst + rate·W`.
 */

/** The outcome of one GCRA step. */
export interface GcraStep {
  readonly allowed: boolean;
  /** The TAT to keep (unchanged when refused), ms on the caller's clock. */
  readonly tat: number;
  /** Requests that would still pass right now after this one (0 when refused). */
  readonly remaining: number;
  /** Refused: how long until one request would pass (ms, > 0); 0 when allowed. */
  readonly retryAfterMs: number;
  /** How long until the full burst is available again (ms, ≥ 0). */
  readonly resetMs: number;
}

/**
 * One request at `now` against a tenant whose TAT is `tat` (undefined: never
 * seen, or forgotten). `intervalMs` > 0; `burst` ≥ 1 (a fraction is allowed:
 * degraded limits divide it among replicas).
 */
export function gcraStep(tat: number | undefined, now: number, intervalMs: number, burst: number): GcraStep {
  const start = tat === undefined || tat < now ? now : tat;
  const next = start + intervalMs;
  const allowAt = next - burst * intervalMs;
  if (allowAt - now > ROUNDING_MS) return { allowed: false, tat: start, remaining: 0, retryAfterMs: allowAt - now, resetMs: start - now };
  return { allowed: true, tat: next, remaining: Math.floor((now - allowAt + ROUNDING_MS) / intervalMs), retryAfterMs: 0, resetMs: next - now };
}

/** Slack for floating-point sums: an interval such as 1000 / 30 ms, added up, lands a hair off the boundary. */
const ROUNDING_MS = 1e-6;

/**
 * A seeded, open-loop arrival schedule: Poisson arrivals (exponential gaps)
 * at a fixed rate, each either a turn of one of a pool of conversations
 * (carrying a session key) or a one-shot request. Generated once per run so
 * every policy faces exactly the same arrivals.
 */

import { seededRng } from '../sim/random.ts';

export { seededRng, type Rng } from '../sim/random.ts';

/** One scheduled request. */
export interface Arrival {
  /** Index in the schedule (0-based), unique within a run. */
  readonly index: number;
  /** When to send it, in ms after the run starts. */
  readonly atMs: number;
  /** Conversation key (`x-session-id`), or undefined for a one-shot request. */
  readonly sessionKey: string | undefined;
  /** 1-based turn number within the conversation; 1 for one-shot requests. */
  readonly turn: number;
}

/** What the schedule is made of. */
export interface ScheduleSpec {
  /** Mean arrivals per second (> 0). */
  readonly ratePerS: number;
  /** Schedule length (ms); arrivals fall in [0, lengthMs). */
  readonly lengthMs: number;
  /** Share of arrivals that belong to a conversation (0-1). */
  readonly sessionShare: number;
  /** Number of distinct conversations keyed arrivals are spread over (≥ 1). */
  readonly sessions: number;
  readonly seed: number;
}

/**
 * Draws the whole schedule up front. Keyed arrivals pick a conversation
 * uniformly at random, so turns of one conversation can overlap in time the
 * way a user with several tabs (or an agent) produces them.
 */
export function poissonSchedule(spec: ScheduleSpec): Arrival[] {
  if (!(spec.ratePerS > 0)) throw new Error(`rate must be > 0, got ${spec.ratePerS}`);
  const random = seededRng(spec.seed);
  const turns = new Map<string, number>();
  const arrivals: Arrival[] = [];
  // 1 - random() is in (0, 1], so the log is finite.
  for (let t = -Math.log(1 - random()) * (1000 / spec.ratePerS); t < spec.lengthMs; t += -Math.log(1 - random()) * (1000 / spec.ratePerS)) {
    const keyed = random() < spec.sessionShare;
    const sessionKey = keyed ? `conv-${Math.floor(random() * spec.sessions)}` : undefined;
    const turn = sessionKey === undefined ? 1 : (turns.get(sessionKey) ?? 0) + 1;
    if (sessionKey !== undefined) turns.set(sessionKey, turn);
    arrivals.push({ index: arrivals.length, atMs: t, sessionKey, turn });
  }
  return arrivals;
}

/**
 * A session's shared engine assignment (Redis), as a request hook: before
 * scheduling, the engine the session is assigned to fleet-wide (or that it
 * has none yet and is placed by load); after the decision, the assignment
 * made or moved. Without Redis the hook is not registered: rendezvous
 * hashing, which every replica agrees on, keeps sessions together.
 *
 * The replica's recent copy of an assignment answers without a promise, so
 * only a session the replica has not seen lately waits for Redis, at most
 * one lookup per request; a request without a session key waits for nothing.
 * A copy that names an engine under pressure (a queue estimated or shown:
 * where another replica may have just moved sessions off) is read again
 * from Redis: kept, it sent a moved session back to its old engine until
 * the copy expired, an engine change no replica counted as a move.
 */
import type { RequestFacts } from '../scheduling/candidate.ts';
import type { SessionName } from '../state/session-names.ts';
import type { HookEndpoint, PreparedFacts, RequestHook } from './request-hooks.ts';

/** What the hook needs of the shared session assignments (router/state/shared-assignments.ts). */
export interface SessionAssignmentsLookup {
  /** The assignment this replica read or made recently, if still fresh; no I/O. */
  cached(name: SessionName): string | undefined;
  /**
   * The stored assignment; null when Redis says there is none; undefined when Redis did not answer in time. Never rejects.
   * `legacyKey` (the client's key) lets a miss read what an older release stored (rolling upgrade).
   */
  lookUp(name: SessionName, legacyKey?: string): Promise<string | null | undefined>;
  /** Records that the session now goes to `to` (its first assignment when `from` is undefined, else a move). No await. */
  assign(name: SessionName, from: string | undefined, to: string): void;
}

export class SessionAssignmentHook implements RequestHook {
  readonly #sessions: SessionAssignmentsLookup;
  readonly #underPressure: (engine: string) => boolean;

  /** `underPressure`: the engine with this id shows or is estimated to have a queue at this replica (another may move sessions off it). */
  constructor(sessions: SessionAssignmentsLookup, underPressure: (engine: string) => boolean = () => false) {
    this.#sessions = sessions;
    this.#underPressure = underPressure;
  }

  /** Sets `assignedEndpoint` (assigned), or `placeSession` (none stored); neither when Redis did not answer. */
  prepare(facts: PreparedFacts): Promise<void> | undefined {
    if (facts.sessionKey === undefined) return undefined;
    // The classify stage named it: a SessionName, never the client's key.
    const name = facts.sessionKey as SessionName;
    const cached = this.#sessions.cached(name);
    if (cached !== undefined && !this.#underPressure(cached)) {
      facts.assignedEndpoint = cached;
      return undefined;
    }
    // None stored: placed by load and stored. Unknown (Redis away): rendezvous hashing, which every replica agrees on.
    return this.#sessions.lookUp(name, facts.legacySessionKey).then((assigned) => {
      if (assigned === null) facts.placeSession = true;
      else if (assigned !== undefined) facts.assignedEndpoint = assigned;
    });
  }

  /** The session now goes to `target`: stored when that is its first engine or a move. */
  admitted(facts: RequestFacts, target: HookEndpoint): void {
    if (facts.sessionKey !== undefined && facts.assignedEndpoint !== target.id) this.#sessions.assign(facts.sessionKey as SessionName, facts.assignedEndpoint, target.id);
  }
}

/**
 * Stickiness accounting from the engines' own records: each simulator counts
 * the requests it received per `x-session-id`, so which engines served a
 * conversation is known from the engines, not from what the routers claim.
 * The records hold no order, so a conversation that went A → B → A shows as
 * two engines: the moves counted here are a lower bound, which is what a
 * check that every move was counted by the routers needs.
 */

/** Requests received per session key, one map per engine. */
export type SessionRecords = readonly ReadonlyMap<string, number>[];

/** What the records say about the conversations of one run. */
export interface Stickiness {
  /** Conversations with at least two requests (a single request cannot move). */
  readonly conversations: number;
  /** Of those: every request reached one engine. */
  readonly onOneEngine: number;
  /** `onOneEngine / conversations`; NaN without conversations. */
  readonly share: number;
  /** Conversations that reached more than one engine. */
  readonly changedEngine: number;
  /** At least this many moves happened: Σ (engines reached − 1). */
  readonly minMoves: number;
}

/** What an engine joining mid-run did to the conversations that already existed. */
export interface JoinEffect {
  /** Conversations seen before the join that had at least one more request after it. */
  readonly existing: number;
  /** Of those: reached an engine after the join that they had not reached before it. */
  readonly moved: number;
  /** Of those: reached the engine that joined. */
  readonly movedToJoined: number;
}

function enginesPerKey(records: SessionRecords): Map<string, { engines: Set<number>; requests: number }> {
  const out = new Map<string, { engines: Set<number>; requests: number }>();
  records.forEach((record, engine) => {
    for (const [key, requests] of record) {
      const entry = out.get(key) ?? { engines: new Set<number>(), requests: 0 };
      entry.engines.add(engine);
      entry.requests += requests;
      out.set(key, entry);
    }
  });
  return out;
}

/** Stickiness of one run from the engines' final records. */
export function stickiness(records: SessionRecords): Stickiness {
  let conversations = 0;
  let onOneEngine = 0;
  let minMoves = 0;
  for (const { engines, requests } of enginesPerKey(records).values()) {
    if (requests < 2) continue;
    conversations++;
    if (engines.size === 1) onOneEngine++;
    minMoves += engines.size - 1;
  }
  return { conversations, onOneEngine, share: conversations === 0 ? Number.NaN : onOneEngine / conversations, changedEngine: conversations - onOneEngine, minMoves };
}

/** Copies the records as they are now (taken at the join: the simulators keep adding to theirs). */
export function snapshotSessions(records: SessionRecords): SessionRecords {
  return records.map((record) => new Map(record));
}

/**
 * How the conversations that existed in `before` (a snapshot taken at the
 * join) fared afterwards, given the final `after` records (which include
 * `before`'s requests: the simulators only add) and the index of the engine
 * that joined.
 */
export function joinEffect(before: SessionRecords, after: SessionRecords, joined: number): JoinEffect {
  let existing = 0;
  let moved = 0;
  let movedToJoined = 0;
  for (const [key, { engines, requests }] of enginesPerKey(after)) {
    const earlier = new Set<number>();
    let earlierRequests = 0;
    before.forEach((record, engine) => {
      const count = record.get(key);
      if (count === undefined) return;
      earlier.add(engine);
      earlierRequests += count;
    });
    if (earlier.size === 0 || requests <= earlierRequests) continue;
    existing++;
    if ([...engines].some((engine) => !earlier.has(engine))) moved++;
    if (engines.has(joined) && !earlier.has(joined)) movedToJoined++;
  }
  return { existing, moved, movedToJoined };
}

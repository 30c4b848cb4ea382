/**
 * Assignments of keys to engines shared by every replica through Redis:
 * sticky sessions, and where each rare prefix group was placed.
 *
 * Sticky sessions: a session key's first engine is
 * chosen by the scheduling profile (so unequal engines get shares that fit
 * their capacity) and stored; every replica then sends the session there
 * while that engine passes the scheduling filters. When it does not, the
 * replica that noticed records the move, with a compare-and-set so that two
 * replicas noticing at once agree on one new engine, and every replica
 * follows it. Engines that join later take new sessions only: existing
 * conversations stay where their KV cache is.
 *
 * Redis holds `session-v2:<name>` → engine id with a sliding TTL, where the
 * name is the HMAC of (tenant, model, key) (session-names.ts)
 * (`sessions.ttlMs`), refreshed at most once per quarter of it. Each replica
 * keeps what it read or wrote for `sessions.localCacheMs`, so a busy
 * conversation costs one GET per cache period, not one per request. While
 * Redis is degraded, a copy the replica still holds (however old) is used,
 * and sessions it has never seen go by rendezvous hashing as without Redis;
 * their first request after recovery stores where they went. A Redis that
 * comes back empty is refilled the same way: a session this replica saw
 * within its TTL keeps the engine it had.
 *
 * Session keys are client data, up to the 16 KiB header limit: Redis gets
 * the session's 43-character name, never the key, and so does this
 * replica's own table (the type {@link SessionName} lets nothing else in).
 * Keyed by the raw key, one client sending unique 15 KB keys grew the heap
 * from 29 to 355 MiB and killed the router at the chart's 384 MiB heap; by
 * name an entry costs about the same whatever the key, and the table is
 * bounded in bytes (`sessions.localCacheBytes`, an estimate per entry) as
 * well as in entries. What Redis answers is checked the same way: an engine
 * id longer than {@link MAX_ENGINE_ID_LENGTH} is not one, and counts as no
 * answer; the claim and move scripts overwrite such a value instead of
 * sending it back.
 *
 * The same machinery holds where each rare prefix group's last request
 * went, in its own key space (`prefix-v1:<name>`, {@link PREFIX_PLACEMENT_SPACE}),
 * so that every replica follows one placement of a shared document.
 *
 * Rolling upgrade: releases before tenant-scoped names stored
 * `session:<SHA-256 of the key>`. A lookup that misses under the new name
 * reads that old name once (a GET) and, when it holds an engine, stores it
 * under the new name, so conversations placed by old replicas keep their
 * engine while the fleet upgrades. The old name is never written.
 */
import type { BackgroundTask, SessionLookupResult } from '../metrics/label-values.ts';
import { runTask, type TaskFailureReporter } from './background-task.ts';
import { legacySessionName, type SessionName } from './session-names.ts';
import { LuaScript, type SharedStore } from './shared-store.ts';

/** Settings of the shared assignments (`sessions.*`, for prefix placements too). */
export interface AssignmentSettings {
  readonly ttlMs: number;
  readonly localCacheMs: number;
  readonly localCacheEntries: number;
  /** Estimated bytes the local table may hold (see {@link entryBytes}). */
  readonly localCacheBytes: number;
}

/** Longest engine id accepted from Redis (characters): ids are URLs, host:port or pod names, never longer. */
export const MAX_ENGINE_ID_LENGTH = 512;

/**
 * Sets KEYS[1] to ARGV[2] while it holds ARGV[1], nothing, or a value longer
 * than ARGV[4] (not an engine id: never sent back); returns the value it
 * holds after. A first assignment passes '' as ARGV[1] (no engine id is
 * empty), so the first writer wins, as SET NX would; unlike SET NX GET, a
 * huge stored value never crosses the wire.
 */
const CLAIM = `local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] or string.len(current) > tonumber(ARGV[4]) then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return ARGV[2]
end
return current`;

/**
 * One kind of shared assignment: the Redis key space its names live in and
 * the labels its commands and its write task are counted by. A first
 * assignment and a move run one script body under two labels.
 */
export interface AssignmentSpace {
  /** Key prefix before the name (after the install's `redis.keyPrefix`). */
  readonly keyspace: string;
  readonly get: string;
  readonly touch: string;
  readonly set: LuaScript;
  readonly move: LuaScript;
  readonly write: BackgroundTask;
}

/** Sessions: `session-v2:<name>`. */
export const SESSION_SPACE: AssignmentSpace = {
  keyspace: 'session-v2',
  get: 'session_get',
  touch: 'session_touch',
  set: new LuaScript('session_set', CLAIM),
  move: new LuaScript('session_move', CLAIM),
  write: 'session_write',
};

/** The engine a rare prefix group's last request went to (router/request/prefix-placement-hook.ts): `prefix-v1:<name>`. */
export const PREFIX_PLACEMENT_SPACE: AssignmentSpace = {
  keyspace: 'prefix-v1',
  get: 'prefix_placement_get',
  touch: 'prefix_placement_touch',
  set: new LuaScript('prefix_placement_set', CLAIM),
  move: new LuaScript('prefix_placement_move', CLAIM),
  write: 'prefix_placement_write',
};

interface Entry {
  engine: string;
  /** Epoch ms it was read or written. */
  at: number;
  /** Epoch ms the Redis TTL was last set. */
  refreshedAt: number;
  /** Written with a provisional TTL and not read since: when Redis no longer has it, it expired, and is not stored again. */
  provisional: boolean;
}

/**
 * Estimated heap bytes of one local entry: the 43-character name, the
 * Map slot and the entry object measured at about 200 bytes on Node 24, plus
 * the engine id (two bytes a character at worst).
 */
export function entryBytes(engine: string): number {
  return 200 + 2 * engine.length;
}

/** The engine id in a GET or script reply: null for none stored, undefined for anything that is not an id. */
export function engineIdOf(reply: unknown): string | null | undefined {
  if (reply === null) return null;
  return typeof reply === 'string' && reply.length > 0 && reply.length <= MAX_ENGINE_ID_LENGTH ? reply : undefined;
}

/** Like {@link engineIdOf}, for a reply that must name an engine. */
function claimedEngineOf(reply: unknown): string | undefined {
  return engineIdOf(reply) ?? undefined;
}

/**
 * The assignments of one {@link AssignmentSpace}; sessions by default, whose
 * names are {@link SessionName}s.
 */
export class SharedAssignments<Name extends string = SessionName> {
  readonly #store: SharedStore;
  readonly #space: AssignmentSpace;
  readonly #settings: AssignmentSettings;
  readonly #count: (result: SessionLookupResult) => void;
  readonly #now: () => number;
  readonly #report: TaskFailureReporter;
  /** By session name. Insertion order is recency order: a hit re-inserts, the oldest is evicted first. */
  readonly #local = new Map<string, Entry>();
  /** Estimated bytes of {@link #local}. */
  #bytes = 0;

  constructor(
    store: SharedStore,
    settings: AssignmentSettings,
    countLookup: (result: SessionLookupResult) => void,
    now: () => number = Date.now,
    onTaskFailure: TaskFailureReporter = () => {},
    space: AssignmentSpace = SESSION_SPACE,
  ) {
    this.#store = store;
    this.#space = space;
    this.#settings = settings;
    this.#count = countLookup;
    this.#now = now;
    this.#report = onTaskFailure;
  }

  /** Entries held now and their estimated bytes. */
  get localSize(): { readonly entries: number; readonly bytes: number } {
    return { entries: this.#local.size, bytes: this.#bytes };
  }

  /**
   * Sessions per engine id among those this replica holds (read or made within the local cache's
   * bounds): what `/debug/endpoints` shows. Walks the table, so it is for the admin port, not for
   * requests.
   */
  sessionsByEngine(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const entry of this.#local.values()) counts.set(entry.engine, (counts.get(entry.engine) ?? 0) + 1);
    return counts;
  }

  /** The assignment this replica read or made within `localCacheMs`; no I/O but a due TTL refresh (not awaited). */
  cached(name: Name): string | undefined {
    const entry = this.#local.get(name);
    if (entry === undefined) return undefined;
    const now = this.#now();
    if (now - entry.at >= this.#settings.localCacheMs) return undefined;
    this.#count('cache');
    this.#touch(name, entry, now);
    return entry.engine;
  }

  /**
   * The stored assignment; null when Redis says there is none (the session
   * will be placed and stored); undefined when there is none that this
   * replica knows of and Redis did not answer. Never rejects. `legacyKey`,
   * the client's key itself, lets a miss read the name an older release
   * stored (see the rolling upgrade above); omit it to skip that read.
   */
  async lookUp(digest: Name, legacyKey?: string): Promise<string | null | undefined> {
    const stale = this.#local.get(digest);
    const stored = await this.#get(this.#key(digest));
    if (stored === null && stale === undefined && legacyKey !== undefined) {
      const legacy = await this.#get(this.#store.key(`session:${legacySessionName(legacyKey)}`));
      if (typeof legacy === 'string') {
        this.#count('redis');
        this.#assign(digest, undefined, legacy);
        return legacy;
      }
    }
    const now = this.#now();
    if (stored === undefined) {
      // No answer: the copy this replica holds beats a rehash, however old.
      this.#count(stale === undefined ? 'unavailable' : 'cache');
      return stale?.engine;
    }
    if (stored === null) {
      // This replica saw the session within its TTL, Redis has forgotten it: Redis restarted or
      // failed over without the key. The copy is the truth; store it again rather than re-place.
      if (stale !== undefined && !stale.provisional && now - stale.at < this.#settings.ttlMs) {
        this.#count('cache');
        this.#assign(digest, undefined, stale.engine);
        return stale.engine;
      }
      this.#count('miss');
      this.#drop(digest);
      return null;
    }
    this.#count('redis');
    const entry = this.#remember(digest, stored, now, stale?.refreshedAt ?? 0);
    this.#touch(digest, entry, now);
    return stored;
  }

  /**
   * The session went to `to`: its first assignment when `from` is undefined
   * (the first writer wins; a replica that lost the race adopts the winner
   * for the session's next request), else a move off `from`. Not awaited.
   * With `provisionalTtlMs`, Redis keeps it that long instead of `ttlMs`
   * until it is read again (by any replica), which slides it to `ttlMs`: for
   * an assignment that may never be asked for (a prompt seen once).
   */
  assign(name: Name, from: string | undefined, to: string, provisionalTtlMs?: number): void {
    this.#assign(name, from, to, provisionalTtlMs);
  }

  /** GET, not a script: it is a read, so a Redis at its memory cap still answers it. Undefined: no answer. */
  async #get(key: string): Promise<string | null | undefined> {
    return this.#store.status === 'up' ? this.#store.run(this.#space.get, (client) => client.get(key), engineIdOf) : undefined;
  }

  #assign(digest: string, from: string | undefined, to: string, provisionalTtlMs?: number): void {
    const now = this.#now();
    const ttlMs = Math.min(provisionalTtlMs ?? Infinity, this.#settings.ttlMs);
    const provisional = ttlMs < this.#settings.ttlMs;
    // A provisional TTL counts as never slid, so this replica's next read slides it too.
    this.#remember(digest, to, now, provisional ? 0 : now, provisional);
    // Degraded: keep it locally; the session's first lookup after recovery misses and stores it then.
    if (this.#store.status !== 'up') return;
    const args = [from ?? '', to, ttlMs, MAX_ENGINE_ID_LENGTH];
    void runTask(
      this.#space.write,
      async () => {
        const engine = await this.#store.script(from === undefined ? this.#space.set : this.#space.move, [this.#key(digest)], args, claimedEngineOf);
        // The winner's TTL may be provisional: this replica's next read slides it (never slid here).
        if (engine !== undefined && engine !== to) this.#remember(digest, engine, this.#now(), 0);
      },
      this.#report,
    );
  }

  #remember(digest: string, engine: string, at: number, refreshedAt: number, provisional = false): Entry {
    this.#drop(digest);
    const entry = { engine, at, refreshedAt, provisional };
    this.#local.set(digest, entry);
    this.#bytes += entryBytes(engine);
    const { localCacheEntries, localCacheBytes } = this.#settings;
    while (this.#local.size > localCacheEntries || (this.#bytes > localCacheBytes && this.#local.size > 1)) {
      this.#drop(this.#local.keys().next().value as string);
    }
    return entry;
  }

  #drop(digest: string): void {
    const entry = this.#local.get(digest);
    if (entry === undefined) return;
    this.#local.delete(digest);
    this.#bytes -= entryBytes(entry.engine);
  }

  /** Slides the TTL, at most once per quarter of it. */
  #touch(digest: string, entry: Entry, now: number): void {
    if (now - entry.refreshedAt < this.#settings.ttlMs / 4) return;
    entry.refreshedAt = now;
    // Asked for again: a provisional assignment is kept as long as any other from here on.
    entry.provisional = false;
    // The reply (1 or 0) carries nothing this replica needs.
    void this.#store.run(this.#space.touch, (client) => client.pexpire(this.#key(digest), this.#settings.ttlMs), () => true);
  }

  #key(digest: string): string {
    return this.#store.key(`${this.#space.keyspace}:${digest}`);
  }
}

/**
 * Sticky sessions shared by every replica. A session key's first engine is
 * chosen by the scheduling profile (so unequal engines get shares that fit
 * their capacity) and stored; every replica then sends the session there
 * while that engine passes the scheduling filters. When it does not, the
 * replica that noticed records the move, with a compare-and-set so that two
 * replicas noticing at once agree on one new engine, and every replica
 * follows it. Engines that join later take new sessions only: existing
 * conversations stay where their KV cache is.
 *
 * Redis holds `session:<digest of the key>` → engine id with a sliding TTL
 * (`sessions.ttlMs`), refreshed at most once per quarter of it. Each replica
 * keeps what it read or wrote for `sessions.localCacheMs`, so a busy
 * conversation costs one GET per cache period, not one per request. While
 * Redis is degraded, a copy the replica still holds (however old) is used,
 * and sessions it has never seen go by rendezvous hashing as without Redis;
 * their first request after recovery stores where they went. A Redis that
 * comes back empty is refilled the same way: a session this replica saw
 * within its TTL keeps the engine it had.
 *
 * Session keys are client data: Redis gets a SHA-256 digest, never the key.
 */
import { createHash } from 'node:crypto';
import type { SessionLookupResult } from '../metrics/shared-state-metrics.ts';
import { LuaScript, type SharedStore } from './shared-store.ts';

/** Settings of the shared assignments (`sessions.*`). */
export interface SessionAssignmentSettings {
  readonly ttlMs: number;
  readonly localCacheMs: number;
  readonly localCacheEntries: number;
}

/** Sets KEYS[1] to ARGV[2] only while it still holds ARGV[1] (or nothing); returns the value it holds after. */
const MOVE = new LuaScript(
  'session_move',
  `local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return ARGV[2]
end
return current`,
);

interface Entry {
  engine: string;
  /** Epoch ms it was read or written. */
  at: number;
  /** Epoch ms the Redis TTL was last set. */
  refreshedAt: number;
}

export class SessionAssignments {
  readonly #store: SharedStore;
  readonly #settings: SessionAssignmentSettings;
  readonly #count: (result: SessionLookupResult) => void;
  readonly #now: () => number;
  /** Insertion order is recency order: a hit re-inserts, the oldest is evicted first. */
  readonly #local = new Map<string, Entry>();

  constructor(store: SharedStore, settings: SessionAssignmentSettings, countLookup: (result: SessionLookupResult) => void, now: () => number = Date.now) {
    this.#store = store;
    this.#settings = settings;
    this.#count = countLookup;
    this.#now = now;
  }

  /** The assignment this replica read or made within `localCacheMs`; no I/O but a due TTL refresh (not awaited). */
  cached(sessionKey: string): string | undefined {
    const entry = this.#local.get(sessionKey);
    if (entry === undefined) return undefined;
    const now = this.#now();
    if (now - entry.at >= this.#settings.localCacheMs) return undefined;
    this.#count('cache');
    this.#touch(sessionKey, entry, now);
    return entry.engine;
  }

  /**
   * The stored assignment; null when Redis says there is none (the session
   * will be placed and stored); undefined when there is none that this
   * replica knows of and Redis did not answer. Never rejects.
   */
  async lookUp(sessionKey: string): Promise<string | null | undefined> {
    const stale = this.#local.get(sessionKey);
    const stored = this.#store.status === 'up' ? await this.#store.run('session_get', (client) => client.get(this.#key(sessionKey))) : undefined;
    const now = this.#now();
    if (stored === undefined) {
      // No answer: the copy this replica holds beats a rehash, however old.
      this.#count(stale === undefined ? 'unavailable' : 'cache');
      return stale?.engine;
    }
    if (stored === null) {
      // This replica saw the session within its TTL, Redis has forgotten it: Redis restarted or
      // failed over without the key. The copy is the truth; store it again rather than re-place.
      if (stale !== undefined && now - stale.at < this.#settings.ttlMs) {
        this.#count('cache');
        this.assign(sessionKey, undefined, stale.engine);
        return stale.engine;
      }
      this.#count('miss');
      this.#local.delete(sessionKey);
      return null;
    }
    this.#count('redis');
    const entry = this.#remember(sessionKey, stored, now, stale?.refreshedAt ?? 0);
    this.#touch(sessionKey, entry, now);
    return stored;
  }

  /**
   * The session went to `to`: its first assignment when `from` is undefined
   * (the first writer wins; a replica that lost the race adopts the winner
   * for the session's next request), else a move off `from`. Not awaited.
   */
  assign(sessionKey: string, from: string | undefined, to: string): void {
    const now = this.#now();
    this.#remember(sessionKey, to, now, now);
    // Degraded: keep it locally; the session's first lookup after recovery misses and stores it then.
    if (this.#store.status !== 'up') return;
    const key = this.#key(sessionKey);
    const stored =
      from === undefined
        ? this.#store.run('session_set', (client) => client.set(key, to, 'PX', this.#settings.ttlMs, 'NX', 'GET')).then((previous) => previous ?? to)
        : this.#store.script<string>(MOVE, [key], [from, to, this.#settings.ttlMs]);
    void stored.then((engine) => {
      if (engine !== undefined && engine !== to) this.#remember(sessionKey, engine, this.#now(), now);
    });
  }

  #remember(sessionKey: string, engine: string, at: number, refreshedAt: number): Entry {
    const local = this.#local;
    local.delete(sessionKey);
    const entry = { engine, at, refreshedAt };
    local.set(sessionKey, entry);
    if (local.size > this.#settings.localCacheEntries) local.delete(local.keys().next().value as string);
    return entry;
  }

  /** Slides the TTL, at most once per quarter of it. */
  #touch(sessionKey: string, entry: Entry, now: number): void {
    if (now - entry.refreshedAt < this.#settings.ttlMs / 4) return;
    entry.refreshedAt = now;
    void this.#store.run('session_touch', (client) => client.pexpire(this.#key(sessionKey), this.#settings.ttlMs));
  }

  #key(sessionKey: string): string {
    return this.#store.key(`session:${createHash('sha256').update(sessionKey).digest('base64url')}`);
  }
}

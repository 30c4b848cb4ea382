/**
 * Fleet-wide in-flight counts. Every `publishIntervalMs` each replica, in
 * one script call, publishes its per-engine in-flight counts and its router
 * queue's waiting requests per model under keys of its own that expire
 * `replicaTtlMs` later, renews its heartbeat in the replica set, drops
 * replicas whose heartbeat expired, and reads back the live replicas'
 * counts. The load view then adds the others' counts to its own (see
 * router/load/load-formulas.ts), so every replica routes on the fleet's
 * load rather than on the third of it it sent itself, and leaves a replica
 * that queues for a full engine its even share of it
 * (router/scheduling/saturation.ts `evenShare`).
 *
 * Staleness: another replica's count is at most one publish interval old
 * when published and one more when read, so routing sees the others' load
 * 0-2 intervals late (one on average). A replica that dies leaves its
 * counts for at most `replicaTtlMs`. Redis time is the clock, so replicas'
 * clocks need not agree.
 *
 * All keys carry the `{fleet}` hash tag: one slot, so the script runs on a
 * Redis Cluster too. Scrape ownership (sharding engine scrapes across
 * replicas) would hang off the same replica set.
 */
import type { LoadView } from '../load/load-view.ts';
import type { ReplicaCountReader } from '../load/replica-count.ts';
import { runTask, type TaskFailureReporter } from './background-task.ts';
import type { FleetMembership } from './fleet-membership.ts';
import { decodeFleetReply, FLEET_REPLY_LIMITS, type FleetRead } from './fleet-reply.ts';
import { LuaScript, type SharedStore } from './shared-store.ts';

/**
 * KEYS[1] the replica set (sorted by heartbeat expiry). ARGV: this replica's
 * id, the TTL (ms), the per-replica key stems of in-flight counts and of
 * queued requests, the number of in-flight arguments, then engine/count
 * pairs, then model/queued pairs.
 * Returns [id, [engine, count, ...], [model, queued, ...], ...] for every
 * live replica but this one, and this replica's id with two empty lists.
 */
const PUBLISH_AND_READ = new LuaScript(
  'fleet_publish',
  `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local self, ttl, stem, qstem, n = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], tonumber(ARGV[5])
local function put(key, first, last)
  redis.call('DEL', key)
  if last >= first then
    redis.call('HSET', key, unpack(ARGV, first, last))
    redis.call('PEXPIRE', key, ttl)
  end
end
put(stem .. self, 6, 5 + n)
put(qstem .. self, 6 + n, #ARGV)
redis.call('ZADD', KEYS[1], now + ttl, self)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  out[#out + 1] = id
  if id == self then
    out[#out + 1] = {}
    out[#out + 1] = {}
  else
    out[#out + 1] = redis.call('HGETALL', stem .. id)
    out[#out + 1] = redis.call('HGETALL', qstem .. id)
  end
end
return out`,
);

/** Settings of the fleet load. */
export interface FleetLoadSettings {
  readonly replicaId: string;
  readonly publishIntervalMs: number;
  readonly replicaTtlMs: number;
  /** Told when a publish round fails unexpectedly (a bug, not Redis being away: that is an answer of undefined). */
  readonly onTaskFailure?: TaskFailureReporter | undefined;
  /**
   * Router replicas there may be (counted from the router's Service, or
   * `load.replicas`): the live count until the first successful read, so a
   * replica that starts while Redis is down divides degraded quotas by the
   * fleet, not by itself alone; after an outage, when it says more than the
   * last read did.
   */
  readonly replicas?: ReplicaCountReader | undefined;
}

export class FleetLoad implements FleetMembership {
  readonly replicaId: string;
  readonly #store: SharedStore;
  readonly #view: LoadView;
  readonly #settings: FleetLoadSettings;
  readonly #now: () => number;
  readonly #replicasKey: string;
  readonly #stem: string;
  readonly #queuedStem: string;
  #timer: NodeJS.Timeout | undefined;
  #pending = false;
  #live: readonly string[];
  /** Live replicas at the last read; undefined before the first. */
  #liveCount: number | undefined;
  /** The view holds fleet counts from the last read (false before the first and after an outage). */
  #holding = false;
  /** Epoch ms of the last successful read, kept through an outage (start-up before the first). */
  #lastReadAt: number;
  /** The last read, per engine id: the other replicas' open requests. */
  #others = new Map<string, number>();

  constructor(store: SharedStore, view: LoadView, settings: FleetLoadSettings, now: () => number = Date.now) {
    this.replicaId = settings.replicaId;
    this.#store = store;
    this.#view = view;
    this.#settings = settings;
    this.#now = now;
    this.#replicasKey = store.key('{fleet}:replicas');
    this.#stem = store.key('{fleet}:inflight:');
    this.#queuedStem = store.key('{fleet}:queued:');
    this.#live = [settings.replicaId];
    this.#lastReadAt = now();
    // Degraded means the counts can no longer be trusted to be current: back to local counts at once.
    store.onStatus((status) => {
      if (status === 'degraded') this.#forget();
    });
  }

  liveReplicaIds(): readonly string[] {
    return this.#live;
  }

  liveReplicaCount(): number {
    // Never fewer than the configured count: replicas that start with Redis unreachable must not each take a whole quota.
    const known = Math.max(1, this.#settings.replicas?.value ?? 1);
    return this.#liveCount === undefined ? known : this.#holding ? this.#liveCount : Math.max(this.#liveCount, known);
  }

  /** Replicas whose counts the view holds now, this one included (1 while it holds none). */
  get replicasSeen(): number {
    return this.#live.length;
  }

  /** Seconds since the last successful read (since this replica started, before the first). */
  ageSeconds(): number {
    return (this.#now() - this.#lastReadAt) / 1000;
  }

  /** The other replicas' open requests to `endpointId` at the last read. */
  othersInFlight(endpointId: string): number {
    return this.#others.get(endpointId) ?? 0;
  }

  start(): void {
    this.#timer = setInterval(() => this.#round(), this.#settings.publishIntervalMs);
    this.#timer.unref();
    this.#round();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One round: publish this replica's counts, read the others'. Skipped while the previous is still out. */
  async publishAndRead(): Promise<void> {
    if (this.#pending) return;
    this.#pending = true;
    try {
      const args: (string | number)[] = [this.replicaId, this.#settings.replicaTtlMs, this.#stem, this.#queuedStem, 0];
      for (const state of this.#view.all()) if (state.inFlight > 0) args.push(state.id, state.inFlight);
      args[4] = args.length - 5;
      // Only what every reader accepts: one model name too long would make them refuse the whole read.
      let models = 0;
      for (const [model, queued] of this.#view.queuedByModel) {
        if (model.length > FLEET_REPLY_LIMITS.maxIdLength) continue;
        if (++models > FLEET_REPLY_LIMITS.maxEnginesPerReplica) break;
        args.push(model, queued);
      }
      // A reply of the wrong shape or size is no answer, as Redis being away is (see fleet-reply.ts).
      const read = await this.#store.script(PUBLISH_AND_READ, [this.#replicasKey], args, (reply) => decodeFleetReply(reply));
      if (read === undefined) {
        // A missed round or two is fine; counts older than a heartbeat are not.
        if (this.#holding && this.#now() - this.#lastReadAt > this.#settings.replicaTtlMs) this.#forget();
        return;
      }
      this.#adopt(read);
    } finally {
      this.#pending = false;
    }
  }

  /** One timer round: its failure is reported and the next round goes ahead. */
  #round(): void {
    void runTask('fleet_publish', () => this.publishAndRead(), this.#settings.onTaskFailure ?? (() => {}));
  }

  #adopt({ live, others, queuedBy, activeAt }: FleetRead): void {
    if (!live.includes(this.replicaId)) live.push(this.replicaId);
    this.#others = others;
    this.#live = live;
    this.#liveCount = live.length;
    this.#holding = true;
    this.#lastReadAt = this.#now();
    this.#view.fleetInFlight(others, live.length - 1, { queuedBy, activeAt, self: this.replicaId });
  }

  #forget(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.#others = new Map();
    this.#live = [this.replicaId];
    // liveReplicaCount keeps the last count seen: degraded quotas divide by it.
    this.#view.fleetInFlight(undefined);
  }
}

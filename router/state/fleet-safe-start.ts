/**
 * The safe start learned once, by the fleet. Each replica limits what it
 * sends an engine of unknown capacity (router/load/safe-start.ts) and raises
 * the limit on evidence. Alone, a replica that joins a warm fleet (a
 * rollout, an HPA step) started over at the first limit and queued its share
 * of the traffic in its own router queue: its time to first byte was 2x the
 * warm replicas' at p99 for the first seconds. So every replica publishes,
 * per engine, its limit and the capacity it learned, and reads the others':
 *
 * - each replica takes at least an even share of the other replicas' limits
 *   for the engine, as if split over them and itself: a joiner starts from
 *   the fleet's record (a third of it in a fleet of two), and N fresh
 *   replicas, each at the first limit, never multiply a burst by N;
 * - a capacity any replica learned (a queue showed the engine full) is the
 *   engine's, so every replica adopts it.
 *
 * Redis degraded: nothing is shared, each replica keeps what it had and
 * goes on alone. Every reply is checked by shape and size; anything else is
 * no answer. Keys carry the `{fleet}` hash tag of the fleet load, whose
 * replica set names the live replicas.
 */
import type { LoadView } from '../load/load-view.ts';
import type { FleetSafeStartRecord } from '../load/safe-start.ts';
import { runTask, type TaskFailureReporter } from './background-task.ts';
import { LuaScript, type SharedStore } from './shared-store.ts';

/**
 * KEYS[1] the replica set (the fleet load's). ARGV: this replica's id, the
 * TTL (ms), the per-replica key stem, then engine/record pairs. Returns the
 * other live replicas' records, one flat list of engine/record pairs each.
 */
const SHARE = new LuaScript(
  'safe_start_share',
  `local self, ttl, stem = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local mine = stem .. self
redis.call('DEL', mine)
if #ARGV > 3 then
  redis.call('HSET', mine, unpack(ARGV, 4))
  redis.call('PEXPIRE', mine, ttl)
end
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if id ~= self then out[#out + 1] = redis.call('HGETALL', stem .. id) end
end
return out`,
);

/** Settings of the sharing. */
export interface FleetSafeStartSettings {
  readonly replicaId: string;
  readonly intervalMs: number;
  readonly replicaTtlMs: number;
  /** Told of a round that failed (caught: the next round goes ahead). */
  readonly onTaskFailure?: TaskFailureReporter | undefined;
}

/** Time between rounds until the fleet's record is first read (ms). */
const FIRST_READ_RETRY_MS = 25;

/** Most replicas and engines a reply may describe; more is not a reply from this fleet. */
const MAX_REPLICAS = 1_024;
const MAX_ENGINES = 10_000;
/** Longest engine id or record accepted (characters). */
const MAX_FIELD = 512;
/** A limit or capacity beyond this is no engine's. */
const MAX_REQUESTS = 1_000_000;

export class FleetSafeStart {
  readonly #store: SharedStore;
  readonly #view: LoadView;
  readonly #settings: FleetSafeStartSettings;
  readonly #replicasKey: string;
  readonly #stem: string;
  #timer: NodeJS.Timeout | undefined;
  #pending = false;

  constructor(store: SharedStore, view: LoadView, settings: FleetSafeStartSettings) {
    this.#store = store;
    this.#view = view;
    this.#settings = settings;
    this.#replicasKey = store.key('{fleet}:replicas');
    this.#stem = store.key('{fleet}:safestart:');
  }

  start(): void {
    this.#timer = setInterval(() => this.#round(), this.#settings.intervalMs);
    this.#timer.unref();
    this.#untilFirstRead();
  }

  /**
   * Looks every {@link FIRST_READ_RETRY_MS} whether Redis is up, and then reads the fleet's record,
   * until it has been read once: at start-up Redis is usually still connecting, and a replica that
   * joins a warm fleet should meet its first requests at its share, not a sharing round later.
   * Nothing is sent before the store is up: commands to a connecting client fail and would count
   * toward its breaker.
   */
  #untilFirstRead(): void {
    void runTask(
      'safe_start_share',
      async () => {
        if (this.#timer === undefined || (this.#store.status === 'up' && (await this.shareOnce()))) return;
        setTimeout(() => this.#untilFirstRead(), FIRST_READ_RETRY_MS).unref();
      },
      this.#settings.onTaskFailure ?? (() => {}),
    );
  }

  /** One timer round: its failure is reported and the next round goes ahead. */
  #round(): void {
    void runTask('safe_start_share', () => this.shareOnce(), this.#settings.onTaskFailure ?? (() => {}));
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One round: publish this replica's records, adopt the fleet's; true when the fleet's were read. Skipped while the previous is still out. */
  async shareOnce(): Promise<boolean> {
    if (this.#pending) return false;
    this.#pending = true;
    try {
      const args: (string | number)[] = [this.#settings.replicaId, this.#settings.replicaTtlMs, this.#stem];
      for (const state of this.#view.all()) {
        const record = state.safeStartRecord;
        if (record !== undefined) args.push(state.id, `${record.limit.toFixed(3)} ${record.learnedCapacity ?? ''}`);
      }
      // A reply of the wrong shape or size is no answer, as Redis being away is.
      const records = await this.#store.script(SHARE, [this.#replicasKey], args, parseReply);
      if (records === undefined) return false;
      this.#view.fleetSafeStart(records);
      return true;
    } finally {
      this.#pending = false;
    }
  }
}

/** The others' records per engine id, or undefined when the reply is not of the script's shape and size. */
export function parseReply(reply: unknown): Map<string, FleetSafeStartRecord> | undefined {
  if (!Array.isArray(reply) || reply.length > MAX_REPLICAS) return undefined;
  const records = new Map<string, { limits: number; replicas: number; learnedCapacity: number | undefined }>();
  for (const fields of reply) {
    if (!Array.isArray(fields) || fields.length % 2 !== 0 || fields.length > 2 * MAX_ENGINES) return undefined;
    for (let i = 0; i < fields.length; i += 2) {
      const id: unknown = fields[i];
      const value: unknown = fields[i + 1];
      if (typeof id !== 'string' || typeof value !== 'string' || id.length > MAX_FIELD || value.length > MAX_FIELD) return undefined;
      const [limitText = '', capacityText = ''] = value.split(' ');
      const limit = requests(limitText, false);
      const capacity = capacityText === '' ? undefined : requests(capacityText, true);
      if (limit === undefined || (capacityText !== '' && capacity === undefined)) return undefined;
      const record = records.get(id) ?? { limits: 0, replicas: 0, learnedCapacity: undefined };
      record.limits += limit;
      record.replicas++;
      if (capacity !== undefined) record.learnedCapacity = Math.max(record.learnedCapacity ?? 0, capacity);
      records.set(id, record);
    }
  }
  return records;
}

/** A count of requests in 1..MAX_REQUESTS (a limit may be fractional), else undefined. */
function requests(text: string, whole: boolean): number | undefined {
  const value = Number(text);
  return Number.isFinite(value) && (!whole || Number.isInteger(value)) && value >= 1 && value <= MAX_REQUESTS ? value : undefined;
}

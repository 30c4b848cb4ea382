/**
 * An engine's LoRA adapter slots (vLLM's `max_loras`): which adapters are
 * active (their weights in one of `capacity` GPU slots), how many running
 * requests each has, and which one to evict for a newcomer.
 *
 * An active adapter stays active after its last request ends: its weights
 * stay loaded, and the next request for it starts without a load. It leaves
 * only when another adapter needs its slot, and only while none of its
 * requests runs (evicting it under a running request would pull the weights
 * out of a batch); among those idle, the least recently used goes first.
 * Swapping an adapter in costs `loadMs`, paid by the request that swapped it
 * in and by any that start while the load is still under way.
 */

/** One occupied slot. */
interface Slot {
  running: number;
  /** Recency stamp (larger is more recent), from a counter so that ties cannot happen. */
  lastUsed: number;
  /** Clock time (ms) at which the adapter's weights are loaded. */
  readyAt: number;
}

/** Options of {@link LoraSlots}. */
export interface LoraSlotsOptions {
  /** Slots (≥ 1): adapters active at once. */
  readonly capacity: number;
  /** Time to swap an adapter in (ms, ≥ 0). */
  readonly loadMs: number;
  /** Monotonic clock (ms); `performance.now` by default. */
  readonly clock?: () => number;
}

/** The slot table; pure state, no timers (the caller sleeps for {@link LoraSlots.start}'s delay). */
export class LoraSlots {
  readonly capacity: number;
  readonly loadMs: number;
  /** Adapters swapped in since start (each activation of an adapter that was not active). */
  swaps = 0;
  readonly #slots = new Map<string, Slot>();
  readonly #clock: () => number;
  #tick = 0;

  constructor(options: LoraSlotsOptions) {
    this.capacity = Math.max(1, Math.floor(options.capacity));
    this.loadMs = Math.max(0, options.loadMs);
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** Active adapters, in the order they were swapped in. */
  get active(): string[] {
    return [...this.#slots.keys()];
  }

  /** Running requests of `adapter` (0 when it is not active). */
  running(adapter: string): number {
    return this.#slots.get(adapter)?.running ?? 0;
  }

  /** Whether a request for `adapter` could start now: it is active, a slot is free, or an idle adapter can be evicted. */
  canStart(adapter: string): boolean {
    return this.#slots.has(adapter) || this.#slots.size < this.capacity || this.#victim() !== undefined;
  }

  /**
   * Starts a request for `adapter`, swapping it in (evicting the least
   * recently used idle adapter if no slot is free) when it is not active.
   * Returns the delay (ms) before the adapter's weights are loaded: `loadMs`
   * after a swap, what is left of a load under way, else 0. Throws when
   * {@link canStart} is false: the scheduler asks first.
   */
  start(adapter: string): number {
    const now = this.#clock();
    let slot = this.#slots.get(adapter);
    if (slot === undefined) {
      if (this.#slots.size >= this.capacity) {
        const victim = this.#victim();
        if (victim === undefined) throw new Error(`LoRA adapter ${adapter} cannot start: all ${this.capacity} slots run requests`);
        this.#slots.delete(victim);
      }
      slot = { running: 0, lastUsed: 0, readyAt: now + this.loadMs };
      this.#slots.set(adapter, slot);
      this.swaps++;
    }
    slot.running++;
    slot.lastUsed = ++this.#tick;
    return Math.max(0, slot.readyAt - now);
  }

  /** Ends a request started with {@link start}; the adapter stays active, evictable once idle. */
  finish(adapter: string): void {
    const slot = this.#slots.get(adapter);
    if (slot === undefined || slot.running === 0) throw new Error(`LoRA adapter ${adapter} has no running request to finish`);
    slot.running--;
    slot.lastUsed = ++this.#tick;
  }

  /** The least recently used active adapter with no running request. */
  #victim(): string | undefined {
    let victim: string | undefined;
    let oldest = Infinity;
    for (const [adapter, slot] of this.#slots) {
      if (slot.running === 0 && slot.lastUsed < oldest) {
        victim = adapter;
        oldest = slot.lastUsed;
      }
    }
    return victim;
  }
}

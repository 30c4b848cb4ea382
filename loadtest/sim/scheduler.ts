/**
 * The engine's batch slots: at most `maxSeqs` requests run at once, the rest
 * wait in FIFO order, like vLLM's scheduler as seen from outside.
 *
 * A request may also need something besides a batch slot (a LoRA adapter
 * slot, engine-lora.ts). One that cannot have it yet stays queued and is
 * skipped, so it does not block the requests behind it that could run: vLLM's
 * scheduler does the same with a waiting request whose adapter would exceed
 * `max_loras`. Among the requests that can run, the order stays FIFO.
 */

/**
 * A request's claim on resources besides its batch slot, told the request's
 * lifecycle by the scheduler. Every call is synchronous, inside the
 * scheduler's own bookkeeping, so no other request sees a half-taken state.
 */
export interface Admission {
  /** Whether the request could start now, given a free batch slot. */
  ready(): boolean;
  /** The request waits in the queue (no batch slot, or not `ready`). Not called for one that starts at once. */
  queued(): void;
  /** The request starts: it takes what `ready` promised. */
  started(): void;
  /** The request is over: it ran (`ran`), or it left the queue unstarted (its client went away). */
  ended(ran: boolean): void;
}

/** One queued request. */
interface Waiter {
  readonly ready: () => boolean;
  readonly grant: () => void;
}

const ALWAYS = (): boolean => true;

export class SeqScheduler {
  running = 0;
  readonly #queue: Waiter[] = [];

  /** Requests waiting for a slot (those waiting for their adapter included). */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Waits for a slot (and whatever `admission` needs). Resolves `true` once
   * running; resolves `false` when `cancelled` fires first (the client left
   * while queued). A running request ends with {@link release}.
   */
  acquire(maxSeqs: number, cancelled: AbortSignal, admission?: Admission): Promise<boolean> {
    const ready = admission === undefined ? ALWAYS : () => admission.ready();
    // Without admissions every waiter is ready, and this is "the queue is empty".
    if (this.running < maxSeqs && ready() && this.#queue.every((w) => !w.ready())) {
      this.running++;
      admission?.started();
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        ready,
        grant: () => {
          cancelled.removeEventListener('abort', onAbort);
          this.running++;
          admission?.started();
          resolve(true);
        },
      };
      const onAbort = () => {
        const i = this.#queue.indexOf(waiter);
        if (i !== -1) this.#queue.splice(i, 1);
        admission?.ended(false);
        resolve(false);
      };
      cancelled.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      admission?.queued();
    });
  }

  /** Frees a slot (ending `admission`, the one the request acquired with) and starts the next waiters `maxSeqs` allows. */
  release(maxSeqs: number, admission?: Admission): void {
    this.running--;
    // First, so a waiter that needed what this request held (an idle adapter) sees it free.
    admission?.ended(true);
    for (let i = 0; i < this.#queue.length && this.running < maxSeqs; ) {
      const waiter = this.#queue[i] as Waiter;
      if (!waiter.ready()) {
        i++;
        continue;
      }
      this.#queue.splice(i, 1);
      waiter.grant();
    }
  }
}

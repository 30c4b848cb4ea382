/**
 * The engine's batch slots: at most `maxSeqs` requests run at once, the rest
 * wait in FIFO order, like vLLM's scheduler as seen from outside.
 */
export class SeqScheduler {
  running = 0;
  readonly #queue: (() => void)[] = [];

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Waits for a slot. Resolves `true` once running; resolves `false` when
   * `cancelled` fires first (the client left while queued).
   */
  acquire(maxSeqs: number, cancelled: AbortSignal): Promise<boolean> {
    if (this.running < maxSeqs && this.#queue.length === 0) {
      this.running++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        cancelled.removeEventListener('abort', onAbort);
        this.running++;
        resolve(true);
      };
      const onAbort = () => {
        const i = this.#queue.indexOf(grant);
        if (i !== -1) this.#queue.splice(i, 1);
        resolve(false);
      };
      cancelled.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(grant);
    });
  }

  /** Frees a slot and starts the next waiter, if `maxSeqs` allows. */
  release(maxSeqs: number): void {
    this.running--;
    while (this.running < maxSeqs && this.#queue.length > 0) (this.#queue.shift() as () => void)();
  }
}

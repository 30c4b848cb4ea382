/**
 * Logs shedding per reason when it starts and when it stops, never per
 * request: at thousands of rejections per second a log line each would be
 * its own outage.
 */
import type { Logger } from '../log.ts';

/** Quiet time after which a reason's shedding counts as stopped (ms). */
const QUIET_MS = 2_000;

interface Episode {
  startedAt: number;
  lastAt: number;
  count: number;
}

export class ShedLog {
  readonly #logger: Logger;
  readonly #episodes = new Map<string, Episode>();
  #timer: NodeJS.Timeout | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Records one shed request. */
  shed(reason: string, now = Date.now()): void {
    const episode = this.#episodes.get(reason);
    if (episode !== undefined) {
      episode.lastAt = now;
      episode.count++;
      return;
    }
    this.#episodes.set(reason, { startedAt: now, lastAt: now, count: 1 });
    this.#logger.warn({ reason }, 'shedding started');
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.sweep(), QUIET_MS / 2);
      this.#timer.unref();
    }
  }

  /** Ends episodes that have been quiet long enough. */
  sweep(now = Date.now()): void {
    for (const [reason, episode] of this.#episodes) {
      if (now - episode.lastAt < QUIET_MS) continue;
      this.#episodes.delete(reason);
      this.#logger.info({ reason, shed: episode.count, durationMs: episode.lastAt - episode.startedAt }, 'shedding stopped');
    }
    if (this.#episodes.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

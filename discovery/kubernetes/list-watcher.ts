/**
 * Keeps an in-memory copy of one Kubernetes collection (objects at a path
 * with a label selector) in step with the API server: list, then watch from
 * the list's resourceVersion; whenever the watch ends, for any reason, list
 * again.
 *
 * A peer router kept a deleted pod routable for 22 hours because its watch
 * reconnected from an old resourceVersion without re-listing. The rules here:
 * - every restart re-lists (the list replaces the whole copy, so whatever a
 *   watch missed is repaired);
 * - 410 Gone (HTTP status or an ERROR event) re-lists at once;
 * - any other failure (connect, HTTP status, stream cut, malformed event,
 *   non-410 ERROR event) restarts after a jittered exponential backoff;
 * - a watch silent past `watchIdleTimeoutMs` (no events, no bookmarks; the
 *   watch asks for bookmarks) is abandoned and restarted;
 * - the watch is ended every `resyncIntervalMs` (jittered) for a full re-list;
 * - while lists fail, the last good copy is kept (nothing is emitted).
 *
 * `@kubernetes/client-node` 2.0.1's `ListWatch` (`dist/cache.js`,
 * `doneHandler`) resumes from its last resourceVersion after a watch
 * timeout or a clean close and, after any other error, calls its error
 * callbacks and never restarts; it also ignores non-410 ERROR events. Hence
 * this loop rather than `makeInformer`.
 */
import type { ListWatchApi } from './kube-api.ts';

/** Why the list+watch loop restarted (metric label values). */
export type RestartReason = 'error' | 'gone' | 'malformed' | 'idle' | 'resync' | 'closed';

/** Every {@link RestartReason}, for metrics. */
export const RESTART_REASONS: readonly RestartReason[] = ['error', 'gone', 'malformed', 'idle', 'resync', 'closed'];

/** Minimal metadata every Kubernetes object carries. */
export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly resourceVersion?: string;
}

/** Timing of the loop, in milliseconds. */
export interface ListWatchTiming {
  /** Full re-list period; each period is jittered by up to -10 %. */
  readonly resyncIntervalMs: number;
  /** A watch with no event or bookmark for this long is restarted. */
  readonly watchIdleTimeoutMs: number;
  /** First backoff after a failure; doubles per consecutive failure, with jitter. */
  readonly backoffInitialMs: number;
  /** Largest backoff. */
  readonly backoffMaxMs: number;
}

/** Injected time and randomness (tests pass their own). */
export interface Environment {
  readonly now: () => number;
  readonly random: () => number;
  readonly setTimeout: (fn: () => void, ms: number) => unknown;
  readonly clearTimeout: (handle: unknown) => void;
}

/** Real clock and timers. Timers are unref'd so they never keep the process alive. */
export const REAL_ENVIRONMENT: Environment = {
  now: Date.now,
  random: Math.random,
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What the loop reports; all callbacks must not throw. */
export interface ListWatchHooks {
  /** The copy changed (after a list, or after a chunk of watch events). Keys are `namespace/name`. */
  readonly changed: (objects: ReadonlyMap<string, unknown>) => void;
  /** A list succeeded. */
  readonly listed?: (count: number) => void;
  /** The loop is restarting: `error` is set for failures. */
  readonly restarting?: (reason: RestartReason, error: string | undefined, delayMs: number) => void;
}

/** What the loop knows about its own health (for `/debug/endpoints`). */
export interface ListWatchStatus {
  /** At least one list succeeded. */
  readonly synced: boolean;
  /** Epoch ms of the last successful list. */
  readonly lastListAt: number | undefined;
  /** Epoch ms of the last watch event (bookmarks included). */
  readonly lastEventAt: number | undefined;
  /** Set from a failure until the next successful list. */
  readonly error: string | undefined;
  /** Epoch ms of the first failure since the last successful list. */
  readonly errorSince: number | undefined;
  /** Restarts since start, by reason. */
  readonly restarts: Readonly<Record<RestartReason, number>>;
  /** Objects in the copy. */
  readonly objects: number;
}

/** A status for `/debug/endpoints`: times as ISO strings, absent values as null. */
export function debugListWatchStatus<T extends ListWatchStatus>(status: T): Omit<T, 'lastListAt' | 'lastEventAt' | 'errorSince' | 'error'> & Record<'lastListAt' | 'lastEventAt' | 'errorSince' | 'error', string | null> {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return { ...status, lastListAt: iso(status.lastListAt), lastEventAt: iso(status.lastEventAt), errorSince: iso(status.errorSince), error: status.error ?? null };
}

/** How one watch session ended without an error. */
type SessionEnd = 'gone' | 'idle' | 'resync' | 'closed';

/** A fault found in the watch stream itself. */
class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
}

const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** The list+watch loop for one collection. */
export class ListWatcher {
  readonly #api: ListWatchApi;
  readonly #path: string;
  readonly #query: Readonly<Record<string, string>>;
  readonly #timing: ListWatchTiming;
  readonly #env: Environment;
  readonly #hooks: ListWatchHooks;
  #objects = new Map<string, unknown>();
  #abort = new AbortController();
  #running: Promise<void> | undefined;
  #synced = false;
  #lastListAt: number | undefined;
  #lastEventAt: number | undefined;
  #error: string | undefined;
  #errorSince: number | undefined;
  readonly #restarts: Record<RestartReason, number> = { error: 0, gone: 0, malformed: 0, idle: 0, resync: 0, closed: 0 };

  constructor(api: ListWatchApi, path: string, query: Readonly<Record<string, string>>, timing: ListWatchTiming, hooks: ListWatchHooks, env: Environment = REAL_ENVIRONMENT) {
    this.#api = api;
    this.#path = path;
    this.#query = query;
    this.#timing = timing;
    this.#hooks = hooks;
    this.#env = env;
  }

  /** Starts the loop (once). */
  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stops the loop and closes its list or watch; resolves when it has ended. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#running;
  }

  status(): ListWatchStatus {
    return {
      synced: this.#synced,
      lastListAt: this.#lastListAt,
      lastEventAt: this.#lastEventAt,
      error: this.#error,
      errorSince: this.#errorSince,
      restarts: { ...this.#restarts },
      objects: this.#objects.size,
    };
  }

  async #loop(): Promise<void> {
    const signal = this.#abort.signal;
    let failures = 0; // consecutive unproductive cycles, for the backoff
    while (!signal.aborted) {
      let reason: RestartReason;
      let error: string | undefined;
      let productive = false;
      try {
        const resourceVersion = await this.#list(signal);
        const session = await this.#watchSession(resourceVersion, signal);
        reason = session.end;
        productive = session.productive;
      } catch (err) {
        if (signal.aborted) break;
        reason = err instanceof MalformedEventError ? 'malformed' : isGone(err) ? 'gone' : 'error';
        error = err instanceof Error ? err.message : String(err);
        if (reason !== 'gone') this.#fail(error);
      }
      if (signal.aborted) break;
      // A productive watch (it delivered events or ran its course) re-lists at
      // once; anything else backs off, so a server that fails or closes every
      // watch at once is not hammered.
      failures = productive && error === undefined ? 0 : failures + 1;
      const delay = failures === 0 || (reason === 'gone' && failures === 1) ? 0 : this.#backoff(failures);
      this.#restarts[reason]++;
      this.#hooks.restarting?.(reason, error, delay);
      if (delay > 0) await this.#sleep(delay, signal);
    }
  }

  /** "Equal jitter" over an exponentially growing cap: uniform in [cap/2, cap]. */
  #backoff(failures: number): number {
    const cap = Math.min(this.#timing.backoffMaxMs, this.#timing.backoffInitialMs * 2 ** Math.min(failures - 1, 30));
    return Math.round(cap / 2 + (this.#env.random() * cap) / 2);
  }

  #fail(error: string): void {
    this.#error = error;
    this.#errorSince ??= this.#env.now();
  }

  async #list(signal: AbortSignal): Promise<string> {
    const result = await this.#api.list(this.#path, this.#query, signal);
    const objects = new Map<string, unknown>();
    for (const item of result.items) {
      const key = objectKey(item);
      if (key === undefined) throw new MalformedEventError(`list ${this.#path}: an item has no metadata.name`);
      objects.set(key, item);
    }
    this.#objects = objects;
    this.#synced = true;
    this.#lastListAt = this.#env.now();
    this.#error = undefined;
    this.#errorSince = undefined;
    this.#hooks.listed?.(objects.size);
    this.#hooks.changed(this.#objects);
    return result.resourceVersion;
  }

  /**
   * One watch from `resourceVersion`. Resolves with how it ended; rejects on
   * transport errors and malformed events. `productive` is true when it
   * delivered at least one event, ran for a while, or lasted until its resync
   * or idle bound.
   */
  async #watchSession(resourceVersion: string, outer: AbortSignal): Promise<{ end: SessionEnd; productive: boolean }> {
    const session = new AbortController();
    const onOuterAbort = () => session.abort();
    outer.addEventListener('abort', onOuterAbort, { once: true });
    let end: SessionEnd | undefined;
    let events = 0; // events applied, the 410 ERROR that ends a session not counted
    const startedAt = this.#env.now();
    const finish = (how: SessionEnd) => {
      end ??= how;
      session.abort();
    };
    const resyncMs = Math.max(1, Math.round(this.#timing.resyncIntervalMs * (1 - 0.1 * this.#env.random())));
    const resyncTimer = this.#env.setTimeout(() => finish('resync'), resyncMs);
    let idleTimer = this.#env.setTimeout(() => finish('idle'), this.#timing.watchIdleTimeoutMs);
    const query: Record<string, string> = {
      ...this.#query,
      allowWatchBookmarks: 'true',
      // The server ends the watch a little after our own resync would, as a backstop.
      timeoutSeconds: String(Math.ceil(resyncMs / 1000) + 30),
      ...(resourceVersion === '' ? {} : { resourceVersion }),
    };
    try {
      await this.#api.watch(this.#path, query, session.signal, (lines) => {
        if (end !== undefined) return;
        this.#env.clearTimeout(idleTimer);
        idleTimer = this.#env.setTimeout(() => finish('idle'), this.#timing.watchIdleTimeoutMs);
        this.#lastEventAt = this.#env.now();
        let changed = false;
        for (const line of lines) {
          const outcome = this.#apply(line);
          if (outcome === 'gone') {
            finish('gone');
            break;
          }
          events++;
          changed ||= outcome === 'changed';
        }
        if (changed) this.#hooks.changed(this.#objects);
      });
      end ??= 'closed';
    } catch (err) {
      if (end === undefined || outer.aborted) throw err;
    } finally {
      this.#env.clearTimeout(resyncTimer);
      this.#env.clearTimeout(idleTimer);
      outer.removeEventListener('abort', onOuterAbort);
    }
    // Long enough that restarting at once cannot become a tight loop.
    const lasted = this.#env.now() - startedAt >= 10 * this.#timing.backoffInitialMs;
    return { end, productive: events > 0 || lasted || end === 'resync' || end === 'idle' };
  }

  /** Applies one watch event line. @throws MalformedEventError or Error (non-410 ERROR event). */
  #apply(line: string): 'changed' | 'same' | 'gone' {
    let event: { type?: unknown; object?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      throw new MalformedEventError(`watch ${this.#path}: event is not JSON`);
    }
    if (event === null || typeof event !== 'object' || typeof event.type !== 'string' || !EVENT_TYPES.has(event.type)) {
      throw new MalformedEventError(`watch ${this.#path}: event has no known type`);
    }
    if (event.object === null || typeof event.object !== 'object') throw new MalformedEventError(`watch ${this.#path}: ${event.type} event has no object`);
    switch (event.type) {
      case 'BOOKMARK':
        return 'same';
      case 'ERROR': {
        const status = event.object as { code?: unknown; reason?: unknown; message?: unknown };
        if (status.code === 410) return 'gone';
        const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
        throw new Error(`watch ${this.#path}: ERROR event ${text(status.code)} ${text(status.reason)} ${text(status.message)}`.trim());
      }
      default: {
        const key = objectKey(event.object);
        if (key === undefined) throw new MalformedEventError(`watch ${this.#path}: ${event.type} event object has no metadata.name`);
        if (event.type === 'DELETED') return this.#objects.delete(key) ? 'changed' : 'same';
        this.#objects.set(key, event.object);
        return 'changed';
      }
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#env.clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.#env.setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** `namespace/name` of an object, or undefined when it has no name. */
export function objectKey(object: unknown): string | undefined {
  const meta = (object as { metadata?: ObjectMeta } | null)?.metadata;
  if (meta === undefined || typeof meta.name !== 'string' || meta.name === '') return undefined;
  return `${meta.namespace ?? ''}/${meta.name}`;
}

function isGone(err: unknown): boolean {
  return (err as { statusCode?: unknown } | null)?.statusCode === 410;
}

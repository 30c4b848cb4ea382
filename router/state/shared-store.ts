/**
 * The router's one door to Redis. Every command goes through {@link SharedStore.run}
 * or {@link SharedStore.script}, which answer `undefined` instead of failing:
 * when Redis is down, slow, paused or refusing, the caller goes on with its
 * local state. The door keeps the books on that: a circuit breaker (so a
 * paused Redis costs each request nothing once it has opened), the up /
 * degraded status with one event per transition, command latencies and
 * failures by kind.
 *
 * Keys: every key is `keyPrefix` + the caller's name, so several routers can
 * share one Redis and an ACL can be limited to the prefix. Keys that a
 * script touches together carry the same `{hash tag}` so a Redis Cluster
 * keeps them in one slot.
 */
import { createHash } from 'node:crypto';
import { CircuitBreaker, type BreakerSettings, type BreakerState } from './breaker.ts';
import type { Config } from '../config/schema.ts';
import type { CommandFailure } from '../metrics/label-values.ts';
import type { RedisClient } from './redis-client.ts';
import { MAX_REPLY_BYTES, guardReplySize } from './reply-size-guard.ts';

/** `off`: no Redis configured; `up`: connected and answering; `degraded`: configured but not usable now. */
export type SharedStateStatus = 'off' | 'up' | 'degraded';

export type { CommandFailure };

/** What the store reports (metrics, one log line per transition). Must not throw. */
export interface SharedStoreObserver {
  /** A command answered after `seconds`. */
  commandDone(command: string, seconds: number): void;
  /** A command got no answer. */
  commandFailed(command: string, failure: CommandFailure): void;
  breakerMoved(to: BreakerState): void;
  /** The status changed; `reason` says what moved it. */
  statusChanged(status: Exclude<SharedStateStatus, 'off'>, reason: string): void;
}

/** A Lua script, loaded once per server by its SHA-1 and sent whole only when the server lacks it. */
export class LuaScript {
  /** The command label for metrics, e.g. `fleet_publish`. */
  readonly name: string;
  readonly body: string;
  readonly sha: string;

  constructor(name: string, body: string) {
    this.name = name;
    this.body = body;
    this.sha = createHash('sha1').update(body).digest('hex');
  }
}

/** Settings of the store. */
export interface SharedStoreSettings {
  readonly keyPrefix: string;
  readonly breaker: BreakerSettings;
  /** Longest wait for one command's answer (ms), judged as {@link answerWithin} says. */
  readonly commandTimeoutMs: number;
}

/** The store's settings from the validated `redis.*` config. */
export function sharedStoreSettings(redis: Config['redis']): SharedStoreSettings {
  return { keyPrefix: redis.keyPrefix, breaker: { failures: redis.breakerFailures, openMs: redis.breakerOpenMs }, commandTimeoutMs: redis.commandTimeoutMs };
}

export class SharedStore {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #breaker: CircuitBreaker;
  readonly #observer: SharedStoreObserver;
  readonly #commandTimeoutMs: number;
  #status: Exclude<SharedStateStatus, 'off'> = 'degraded';
  /** EVALSHA refused by the server or a proxy in front of it (not NOSCRIPT): send scripts whole from now on. */
  #evalOnly = false;
  #closed = false;
  #lastFailure: CommandFailure | undefined;
  /** Told of every status change, after the observer (routing drops fleet counts while degraded). */
  readonly #listeners: ((status: Exclude<SharedStateStatus, 'off'>) => void)[] = [];

  constructor(client: RedisClient, settings: SharedStoreSettings, observer: SharedStoreObserver, now: () => number = Date.now) {
    this.#client = client;
    this.#prefix = settings.keyPrefix;
    this.#observer = observer;
    this.#commandTimeoutMs = settings.commandTimeoutMs;
    this.#breaker = new CircuitBreaker(settings.breaker, now);
    this.#breaker.onTransition = (to) => {
      observer.breakerMoved(to);
      // Commands stopped getting answers on a connection that still looks open (a frozen server, a cut
      // network, a master Sentinel has replaced): drop it and reconnect, which also asks the Sentinels.
      if (to === 'open' && this.#lastFailure === 'timeout') client.disconnect(true);
      this.#reassess(to === 'open' ? 'commands failing: circuit breaker open' : `circuit breaker ${to}`);
    };
    // A reply past the cap drops its connection before it is buffered whole (see reply-size-guard.ts).
    guardReplySize(client, MAX_REPLY_BYTES, () => observer.commandFailed('oversized_reply', 'invalid_reply'));
    // ioredis reports connection errors as events; unheard, they would go to the console.
    client.on('error', () => {});
    client.on('ready', () => this.#reassess('connected'));
    client.on('close', () => this.#reassess('connection closed'));
    client.on('end', () => this.#reassess('connection ended'));
  }

  /** `keyPrefix` + `name`. */
  key(name: string): string {
    return this.#prefix + name;
  }

  /** Up when connected, answering and the breaker is closed; degraded otherwise (never `off`: that is no store at all). */
  get status(): Exclude<SharedStateStatus, 'off'> {
    return this.#status;
  }

  /** Hears every status change. */
  onStatus(listener: (status: Exclude<SharedStateStatus, 'off'>) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Sends one command through the breaker. Resolves to its answer, or to
   * `undefined` when it could not be answered in time (never rejects).
   * With `accept`, the answer is what `accept` makes of the reply, and a
   * reply it refuses (`undefined`: wrong shape, too large) counts as an
   * `invalid_reply` failure and resolves to `undefined`, as no answer does.
   */
  run<T>(command: string, send: (client: RedisClient) => Promise<T>): Promise<T | undefined>;
  run<R, T>(command: string, send: (client: RedisClient) => Promise<R>, accept: (reply: R) => T | undefined): Promise<T | undefined>;
  async run<R, T>(command: string, send: (client: RedisClient) => Promise<R>, accept?: (reply: R) => T | undefined): Promise<T | R | undefined> {
    if (this.#closed) return undefined;
    if (!this.#breaker.allow()) {
      this.#observer.commandFailed(command, 'breaker_open');
      return undefined;
    }
    const started = performance.now();
    let reply: R;
    try {
      reply = await answerWithin(send(this.#client), this.#commandTimeoutMs);
    } catch (err) {
      const kind = failureKind(err);
      this.#observer.commandFailed(command, kind);
      // An error reply is an answer from a live Redis about this one command (OOM for a write, WRONGTYPE,
      // an ACL refusal): it says nothing about whether the next command will be answered. Counting it
      // toward the breaker let client-created session keys filling a memory-capped Redis (every SET
      // refused with OOM) open the breaker that also gates quotas and fleet load, flapping every
      // replica into degraded mode. Only replies that say the server cannot serve at all count.
      if (kind === 'server' && !signalsUnavailable(err)) {
        this.#breaker.succeeded();
      } else {
        this.#lastFailure = kind;
        this.#breaker.failed();
      }
      return undefined;
    }
    this.#observer.commandDone(command, (performance.now() - started) / 1000);
    this.#breaker.succeeded();
    if (accept === undefined) return reply;
    const answer = accept(reply);
    if (answer === undefined) this.#observer.commandFailed(command, 'invalid_reply');
    return answer;
  }

  /**
   * Runs `script` on `keys` (prefixed by the caller) with `args`; `undefined`
   * when unanswered. `accept` as for {@link run}: every product caller
   * passes one, since a script's reply is whatever the server sends.
   */
  script<T>(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<T | undefined>;
  script<T>(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], accept: (reply: unknown) => T | undefined): Promise<T | undefined>;
  async script<T>(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], accept?: (reply: unknown) => T | undefined): Promise<T | undefined> {
    return this.run(
      script.name,
      async (client): Promise<unknown> => {
        if (!this.#evalOnly) {
          try {
            return await client.evalsha(script.sha, keys.length, ...keys, ...args);
          } catch (err) {
            const message = (err as Error).message;
            // Anything but a missing script means EVALSHA itself is not allowed here.
            if (!message.startsWith('NOSCRIPT')) {
              if (!isRefusedCommand(message)) throw err;
              this.#evalOnly = true;
            }
          }
        }
        return await client.eval(script.body, keys.length, ...keys, ...args);
      },
      accept ?? ((reply) => reply as T),
    );
  }

  /** Closes the connection; later commands answer `undefined`. */
  async close(): Promise<void> {
    this.#closed = true;
    try {
      await this.#client.quit();
    } catch {
      // Not connected: nothing to say goodbye to.
    } finally {
      // QUIT ends the data connection only; this also ends the Sentinel failover watch and any reconnect.
      this.#client.disconnect();
    }
  }

  #reassess(reason: string): void {
    const next = this.#client.status === 'ready' && this.#breaker.state === 'closed' ? 'up' : 'degraded';
    if (next === this.#status || this.#closed) return;
    this.#status = next;
    this.#observer.statusChanged(next, reason);
    for (const listener of this.#listeners) listener(next);
  }
}

/** Why {@link answerWithin} gave up on a command (its message is what {@link failureKind} reads as a timeout). */
class CommandTimedOut extends Error {
  constructor(ms: number) {
    super(`Command timed out after ${ms} ms`);
    this.name = 'CommandTimedOut';
  }
}

/**
 * `pending`, or a {@link CommandTimedOut} rejection when it has not settled
 * `ms` after the call. The verdict waits for the event loop's next check
 * phase, after its poll phase has read the sockets: a reply that arrived
 * while the loop was busy (a burst of connections on a small host) is read
 * before the timer can call it late. Judged in the timer callback itself, as
 * the client library's own timeout does, timers run before the poll phase, so
 * a loop iteration longer than the timeout failed commands whose answers were
 * already waiting in the socket: under a 2,000-client burst, 1,826-1,940 of
 * 3,000 session lookups `timeout` against an idle Redis on the same host,
 * each request then routed as if the session were new.
 */
function answerWithin<T>(pending: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => setImmediate(() => reject(new CommandTimedOut(ms))), ms);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: Error) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** True for an error that says the command is not allowed (unknown command, ACL, a proxy's refusal). */
function isRefusedCommand(message: string): boolean {
  return /unknown command|NOPERM|not allowed|unsupported|disabled/i.test(message);
}

/**
 * Error replies that mean the server cannot serve commands now (loading its
 * data, busy in a script, cut off from its master or cluster, a replica after
 * a failover): these count toward the breaker like a timeout.
 */
const UNAVAILABLE_REPLIES = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

function signalsUnavailable(err: unknown): boolean {
  return err instanceof Error && UNAVAILABLE_REPLIES.test(err.message);
}

function failureKind(err: unknown): CommandFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (/timed out/i.test(message)) return 'timeout';
  // ioredis' ReplyError is an answer from the server; everything else is the connection.
  if (err instanceof Error && err.name === 'ReplyError') return 'server';
  return 'connection';
}

/**
 * Request hooks: the points of the request lifecycle where what is not the
 * lifecycle's own job plugs in (a session's shared assignment, prefix facts,
 * response pins, the access log, the span's end). A hook implements the
 * points it needs; {@link RequestHooks} runs them in registration order.
 *
 * The hooks are built once, at composition, and each point keeps its own
 * fixed array of the hooks that implement it, so a point nobody uses costs
 * a loop over nothing. The hot path allocates nothing for them: `prepare`
 * enriches the request's one facts object in place and returns a promise
 * only when it really waits (a request without a session key awaits
 * nothing), and the answer is read only on routes a hook asks for.
 */
import type { RequestFacts } from '../scheduling/candidate.ts';
import type { AccessRecord } from './access-log.ts';
import type { RequestTrace } from './request-trace.ts';
import type { BodyFacts } from './routing-facts.ts';

/**
 * A request's facts while hooks may still add to them: one object per
 * request, built by the classify stage with every field a hook may set
 * already present (so every request's facts have one shape), and read-only
 * once scheduling starts.
 */
export type PreparedFacts = { -readonly [K in keyof RequestFacts]: RequestFacts[K] };

/** The endpoint a request was admitted to, or that answered. */
export interface HookEndpoint {
  /** The endpoint's id (a pod's `namespace/name`, or a static backend's address). */
  readonly id: string;
  /** 32-bit hash of {@link id}, as rendezvous hashing uses it. */
  readonly idHash: number;
}

/** One request's reader of its answer's first chunks, made by {@link RequestHook.readAnswer}. */
export interface AnswerReader {
  /**
   * A chunk of the answer's body as `endpoint` sent it (only for a status below 300).
   * @returns true while it wants the next chunk; once false it is not called again for this answer.
   */
  answerBytes(endpoint: HookEndpoint, chunk: Buffer): boolean;
}

/** One plug-in of the request lifecycle; every point is optional. Points must not reject or throw except where stated. */
export interface RequestHook {
  /**
   * Before scheduling: adds to `facts` (in place) what this hook knows of the
   * request. `body` is what the read stage found in the body; `tenant` the
   * API key's tenant (undefined without API keys).
   * @returns undefined when done (the usual case: no promise, nothing awaited),
   *   or a promise that settles once `facts` is complete; it never rejects.
   * @throws SwitchyardError to refuse the request (answered as that error; later hooks do not run).
   */
  prepare?(facts: PreparedFacts, body: BodyFacts, tenant: string | undefined): Promise<void> | undefined;
  /** After the scheduling decision: the request goes to `target` first. Records what later requests will need; no I/O awaited. */
  admitted?(facts: RequestFacts, target: HookEndpoint): void;
  /**
   * Asked once per request before forwarding: a reader of the answer's first
   * chunks for a request on `route` (path) for `tenant`, or undefined when
   * this hook does not read that route's answers (then it costs the request
   * nothing per chunk).
   */
  readAnswer?(route: string, tenant: string | undefined): AnswerReader | undefined;
  /**
   * Whether {@link over} wants the record of a request that reached an
   * engine, asked before that record is built (it is built only if some
   * hook wants it). Absent: always. Requests the router answered itself
   * always get their record.
   */
  wantsRecord?(trace: RequestTrace | undefined): boolean;
  /** The request is over: what it did, and its span (undefined without tracing). */
  over?(record: AccessRecord, trace: RequestTrace | undefined): void;
}

type With<K extends keyof RequestHook> = RequestHook & Required<Pick<RequestHook, K>>;

/** The hooks of every request, in registration order, each point with its own fixed array. */
export class RequestHooks {
  readonly #prepare: readonly With<'prepare'>[];
  readonly #admitted: readonly With<'admitted'>[];
  readonly #readAnswer: readonly With<'readAnswer'>[];
  readonly #over: readonly With<'over'>[];

  /** `hooks` run in this order at every point; built once, never per request. */
  constructor(hooks: readonly RequestHook[]) {
    this.#prepare = hooks.filter((hook): hook is With<'prepare'> => hook.prepare !== undefined);
    this.#admitted = hooks.filter((hook): hook is With<'admitted'> => hook.admitted !== undefined);
    this.#readAnswer = hooks.filter((hook): hook is With<'readAnswer'> => hook.readAnswer !== undefined);
    this.#over = hooks.filter((hook): hook is With<'over'> => hook.over !== undefined);
  }

  /**
   * Runs every hook's `prepare` in order, each after the one before has
   * settled. Undefined when none had to wait, so the caller awaits nothing;
   * else a promise that settles once all have run.
   * @throws SwitchyardError from a hook that refuses the request (synchronously, or as the promise's rejection).
   */
  prepare(facts: PreparedFacts, body: BodyFacts, tenant: string | undefined): Promise<void> | undefined {
    const hooks = this.#prepare;
    for (let i = 0; i < hooks.length; i++) {
      const pending = (hooks[i] as With<'prepare'>).prepare(facts, body, tenant);
      // The last hook's own promise is the answer: no promise of ours on top.
      if (pending !== undefined) return i + 1 === hooks.length ? pending : this.#prepareAfter(pending, i + 1, facts, body, tenant);
    }
    return undefined;
  }

  async #prepareAfter(pending: Promise<void>, next: number, facts: PreparedFacts, body: BodyFacts, tenant: string | undefined): Promise<void> {
    await pending;
    const hooks = this.#prepare;
    for (let i = next; i < hooks.length; i++) {
      const more = (hooks[i] as With<'prepare'>).prepare(facts, body, tenant);
      if (more !== undefined) await more;
    }
  }

  /** Runs every hook's `admitted` in order. */
  admitted(facts: RequestFacts, target: HookEndpoint): void {
    for (const hook of this.#admitted) hook.admitted(facts, target);
  }

  /**
   * The reader of one request's answer: undefined when no hook reads
   * `route`'s answers; else a function for the forwarder's `onAnswerBytes`
   * (one per request that is read) that returns true while a reader still
   * wants chunks.
   */
  answerReader(route: string, tenant: string | undefined): ((endpoint: HookEndpoint, chunk: Buffer) => boolean) | undefined {
    let only: AnswerReader | undefined;
    let several: AnswerReader[] | undefined;
    for (const hook of this.#readAnswer) {
      const reader = hook.readAnswer(route, tenant);
      if (reader === undefined) continue;
      if (only === undefined) only = reader;
      else (several ??= [only]).push(reader);
    }
    if (several !== undefined) return readersInTurn(several);
    if (only === undefined) return undefined;
    const reader = only;
    return (endpoint, chunk) => reader.answerBytes(endpoint, chunk);
  }

  /** Whether some hook wants the record of a request that reached an engine (see {@link RequestHook.wantsRecord}). */
  wantsRecord(trace: RequestTrace | undefined): boolean {
    for (const hook of this.#over) if (hook.wantsRecord === undefined || hook.wantsRecord(trace)) return true;
    return false;
  }

  /** Runs every hook's `over` in order. */
  over(record: AccessRecord, trace: RequestTrace | undefined): void {
    for (const hook of this.#over) hook.over(record, trace);
  }
}

/** Several readers of one answer: each gets the chunks until it wants no more; true while any still wants them. */
function readersInTurn(readers: AnswerReader[]): (endpoint: HookEndpoint, chunk: Buffer) => boolean {
  const wanting = readers.map(() => true);
  return (endpoint, chunk) => {
    let any = false;
    for (let i = 0; i < readers.length; i++) {
      if (wanting[i] !== true) continue;
      const more = (readers[i] as AnswerReader).answerBytes(endpoint, chunk);
      wanting[i] = more;
      any ||= more;
    }
    return any;
  };
}

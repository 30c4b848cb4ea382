/**
 * A scheduling profile: filters → scorers → picker, for one request.
 *
 * Filters, in this order: the model's routable candidates (the load view's
 * per-model index); not ejected; the engine that holds the request's previous
 * response, when it names one; the profile's own filters (plugins, each of
 * which narrows but never empties the pool); not saturated for the request's
 * priority.
 * A session with a shared assignment (Redis) goes to its engine while that
 * engine passes these filters, without a load bound: moving a conversation
 * costs its KV cache, so it moves only off an engine that cannot take it,
 * and the schedule says why. The same holds for a pinned response's engine
 * and an affinity walk's first choice: the safe start's limit on new work
 * does not move them (see ../saturation.ts, homeRoom); at the engine's
 * burst bound the answer is `saturated` with `waitsFor`, and admission lets
 * the request wait for that engine a while. A session that will be stored but has no
 * engine yet is placed by the final picker alone (least load over capacity),
 * not by the affinity walks: the stored engine keeps it together from then
 * on, so its first engine should be the one with room, and engines of
 * unequal size then hold shares of sessions that fit their capacity. Except
 * a session on a LoRA adapter: it is placed by every picker, so the LoRA
 * walk puts it where its adapter runs (an engine without it swaps it in).
 * Then the pickers: zero or more affinity walks (each declines when the
 * request gives it nothing to go on), and a final picker that always decides
 * (weighted maximum or round-robin). The first candidate of the pick is the
 * target; the next one, else the first saturated candidate, is the retry
 * target, since after a failed connect a queue at another engine beats an
 * error. When the saturation filter leaves nobody, the answer is
 * `saturated` and admission queues or sheds.
 *
 * The saturation filter is applied lazily, because testing every endpoint of
 * a large fleet costs more than the rest of the decision: the pick is made
 * over the routable pool and its first choices are tested; only when every
 * one of them is saturated is the whole pool filtered and the pick made
 * again. The answer is the same as filtering first.
 *
 * The profile runs the filters itself, in this fixed order, so it lives in
 * profiles/ with the registry that picks its scorers and pickers: the one
 * folder that imports the plugin folders (see presets.ts).
 */
import { SwitchyardError } from '../../errors/errors.ts';
import type { AssignmentMove, Candidate, DecisionOutcome, RequestFacts } from '../candidate.ts';
import { keepPassing, refusingFilter } from '../filters/profile-filters.ts';
import { keepPinned } from '../filters/response-pin.ts';
import { keepRoutable } from '../filters/routable.ts';
import { splitSaturated } from '../filters/saturation.ts';
import type { CandidateFilter, Pick, Picker, PickContext } from '../pick.ts';
import type { HomeRoom } from '../saturation.ts';
import { ensureUint32 } from '../select.ts';

/** The answer of scheduling for one request. */
export type Schedule<T> =
  /** Go ahead: try `attempts` in order (the target, then at most one retry target). */
  | { readonly kind: 'admit'; readonly attempts: readonly T[]; readonly outcome: DecisionOutcome; readonly moved?: AssignmentMove }
  /**
   * Every candidate is saturated: queue briefly or shed (admission's choice).
   * `waitsFor`: the request's own engine holds it back only by its burst
   * bound, so it waits for that engine rather than moving.
   */
  | { readonly kind: 'saturated'; readonly candidates: readonly T[]; readonly waitsFor?: T }
  /** Refused for good: no endpoint serves the model. */
  | { readonly kind: 'reject'; readonly error: SwitchyardError };

/** Seconds a client should wait before retrying when no endpoint can serve it. */
const NO_ENDPOINT_RETRY_AFTER_S = 5;

/** The context of one decision; one per profile, reset for each request, so a decision allocates none. */
class Decision<T extends Candidate> implements PickContext<T> {
  facts!: RequestFacts;
  candidates!: readonly T[];
  pool!: Uint32Array;
  n = 0;
  saturated!: (candidate: T) => boolean;
  homeRoom!: (candidate: T) => HomeRoom;
  #meanLoad = -1;

  reset(facts: RequestFacts, candidates: readonly T[], pool: Uint32Array, n: number, saturated: (candidate: T) => boolean, homeRoom: (candidate: T) => HomeRoom): this {
    this.facts = facts;
    this.candidates = candidates;
    this.pool = pool;
    this.n = n;
    this.saturated = saturated;
    this.homeRoom = homeRoom;
    this.#meanLoad = -1;
    return this;
  }

  /** Narrows the pool to its first `n` (after filtering), keeping the mean load of the routable pool as the bound's reference. */
  narrow(n: number): this {
    const meanLoad = this.meanLoad;
    this.n = n;
    this.#meanLoad = meanLoad;
    return this;
  }

  get meanLoad(): number {
    if (this.#meanLoad < 0) {
      let load = 0;
      for (let i = 0; i < this.n; i++) load += (this.candidates[this.pool[i] as number] as T).loadScore;
      this.#meanLoad = this.n === 0 ? 0 : load / this.n;
    }
    return this.#meanLoad;
  }
}

export class SchedulingProfile {
  /** Name used in config and as the `policy` label of the decisions metric. */
  readonly name: string;
  readonly #filters: readonly CandidateFilter[];
  readonly #pickers: readonly Picker[];
  /** The final picker alone, which places a session's first request (see the header). */
  readonly #final: readonly Picker[];
  // Scratch reused across decisions: never visible outside one call.
  #pool = new Uint32Array(0);
  #overflow = new Uint32Array(0);
  #filtered = new Uint32Array(0);
  readonly #decision = new Decision<Candidate>();

  /** `pickers`: tried in order; the last must always decide. `filters`: the profile's own, run after the built-in ones. */
  constructor(name: string, pickers: readonly Picker[], filters: readonly CandidateFilter[] = []) {
    if (pickers.length === 0) throw new Error(`scheduling profile ${name} has no picker`);
    this.name = name;
    this.#filters = filters;
    this.#pickers = pickers;
    this.#final = pickers.slice(-1);
  }

  /**
   * Schedules one request over the model's `candidates`. `saturated` is the
   * saturation test for its priority (for new work); `homeRoom` says what
   * the request's own engine (pinned, assigned, or its affinity walk's first
   * choice) can do for it, by default keep it unless saturated.
   */
  schedule<T extends Candidate>(
    facts: RequestFacts,
    candidates: readonly T[],
    saturated: (endpoint: T) => boolean,
    ownEngineRoom: (endpoint: T) => HomeRoom = (endpoint) => (saturated(endpoint) ? 'move' : 'keep'),
  ): Schedule<T> {
    const total = candidates.length;
    if (total === 0) return noEndpoint(facts.model);
    // Once waiting is over, the engine takes the request only if it would anyway; else it goes where new work goes.
    const homeRoom: (endpoint: T) => HomeRoom = facts.mayWaitForHome === false ? (endpoint) => (ownEngineRoom(endpoint) === 'keep' ? 'keep' : 'move') : ownEngineRoom;
    const pool = (this.#pool = ensureUint32(this.#pool, total));
    let n = keepRoutable(candidates, pool);
    n = keepPinned(candidates, facts.pinnedEndpoint, pool, n);
    const pinned = facts.pinnedEndpoint !== undefined && (candidates[pool[0] as number] as T).id === facts.pinnedEndpoint;
    if (pinned) {
      // Only this engine can continue the response: it keeps it, or the request waits or is shed (the pool is this one).
      const engine = candidates[pool[0] as number] as T;
      const room = homeRoom(engine);
      if (room === 'keep') return { kind: 'admit', attempts: [engine], outcome: 'pinned' };
      return room === 'wait' ? { kind: 'saturated', candidates: [engine], waitsFor: engine } : { kind: 'saturated', candidates: [engine] };
    }
    if (this.#filters.length > 0) n = keepPassing(this.#filters, facts, candidates, pool, n, (this.#filtered = ensureUint32(this.#filtered, total)));
    const decision = (this.#decision as unknown as Decision<T>).reset(facts, candidates, pool, n, saturated, homeRoom);
    if (facts.placeSession === true && facts.sessionKey !== undefined) {
      const placed = this.#scheduleByPick(decision, candidates, saturated, facts.loraBaseModel === undefined ? this.#final : this.#pickers);
      return placed.kind === 'admit' ? { ...placed, outcome: 'placed' } : placed;
    }
    let moved: AssignmentMove | undefined;
    if (facts.assignedEndpoint !== undefined) {
      const assigned = findById(candidates, pool, n, facts.assignedEndpoint);
      const room = assigned === undefined ? 'move' : homeRoom(assigned);
      if (assigned !== undefined && room === 'keep') return keepAssigned(assigned, this.#pick(decision, this.#pickers).ordered, saturated);
      if (assigned !== undefined && room === 'wait') return { kind: 'saturated', candidates: [assigned], waitsFor: assigned };
      moved = assigned !== undefined ? 'saturated' : this.#whyNotInPool(facts, candidates, facts.assignedEndpoint);
    }
    const schedule = this.#scheduleByPick(decision, candidates, saturated, this.#pickers);
    return moved === undefined || schedule.kind !== 'admit' ? schedule : { ...schedule, moved };
  }

  /** Why the candidate `id` is not in the pool: a profile filter refused it, it is ejected, or it is no candidate. */
  #whyNotInPool(facts: RequestFacts, candidates: readonly Candidate[], id: string): AssignmentMove {
    const candidate = candidates.find((c) => c.id === id);
    if (candidate === undefined) return 'gone';
    return candidate.ejected || refusingFilter(this.#filters, facts, candidate) === undefined ? 'ejected' : 'filtered';
  }

  #scheduleByPick<T extends Candidate>(decision: Decision<T>, candidates: readonly T[], saturated: (endpoint: T) => boolean, pickers: readonly Picker[]): Schedule<T> {
    const { pool, n } = decision;
    const total = candidates.length;
    const lazy = this.#pick(decision, pickers);
    if (lazy.waitsFor !== undefined) return { kind: 'saturated', candidates: [lazy.waitsFor], waitsFor: lazy.waitsFor };
    const target = lazy.keepsHome === true ? 0 : lazy.ordered.findIndex((c) => !saturated(c));
    if (target >= 0) {
      const retry = lazy.ordered.find((c, i) => i > target && !saturated(c)) ?? lazy.ordered.find((_, i) => i !== target);
      return admitted(lazy, target, retry);
    }
    // Every first choice was saturated: filter the whole pool, and pick again among the rest.
    const overflow = (this.#overflow = ensureUint32(this.#overflow, total));
    const kept = splitSaturated(candidates, saturated, pool, n, overflow);
    if (kept === 0) return { kind: 'saturated', candidates: indexed(candidates, overflow, n) };
    const pick = this.#pick(decision.narrow(kept), pickers);
    return admitted(pick, 0, pick.ordered[1] ?? (candidates[overflow[0] as number] as T));
  }

  #pick<T extends Candidate>(decision: PickContext<T>, pickers: readonly Picker[]): Pick<T> & { readonly declined: DecisionOutcome | undefined } {
    // A final picker deciding after an affinity walk declined is counted under the walk's fallback outcome.
    let declined: DecisionOutcome | undefined;
    const last = pickers.length - 1;
    for (let p = 0; p <= last; p++) {
      const picker = pickers[p] as Picker;
      const pick = picker.pick(decision);
      if (pick === undefined) {
        declined = picker.declinedOutcome ?? declined;
        continue;
      }
      return { ...pick, outcome: p === last ? (declined ?? pick.outcome) : pick.outcome, declined };
    }
    throw new Error(`scheduling profile ${this.name}: its last picker declined`);
  }
}

/** The candidate of `pool[0..n)` whose id is `id`, if any. */
function findById<T extends Candidate>(candidates: readonly T[], pool: Uint32Array, n: number, id: string): T | undefined {
  for (let i = 0; i < n; i++) {
    const candidate = candidates[pool[i] as number] as T;
    if (candidate.id === id) return candidate;
  }
  return undefined;
}

/** Admits the session's assigned engine; the retry target is the profile's own first other choice. */
function keepAssigned<T>(assigned: T, ordered: readonly T[], saturated: (endpoint: T) => boolean): Schedule<T> {
  const retry = ordered.find((c) => c !== assigned && !saturated(c)) ?? ordered.find((c) => c !== assigned);
  return { kind: 'admit', attempts: retry === undefined ? [assigned] : [assigned, retry], outcome: 'assigned' };
}

function admitted<T>(pick: Pick<T>, target: number, retry: T | undefined): Schedule<T> {
  const first = pick.ordered[target] as T;
  return { kind: 'admit', attempts: retry === undefined ? [first] : [first, retry], outcome: pick.outcome };
}

function indexed<T>(candidates: readonly T[], indices: Uint32Array, count: number): T[] {
  const out = new Array<T>(count);
  for (let i = 0; i < count; i++) out[i] = candidates[indices[i] as number] as T;
  return out;
}

function noEndpoint<T>(model: string): Schedule<T> {
  return {
    kind: 'reject',
    error: new SwitchyardError('SWITCHYARD_NO_ENDPOINT', `No endpoint is ready to serve the model \`${model}\`.`, { retryAfterSeconds: NO_ENDPOINT_RETRY_AFTER_S }),
  };
}

/**
 * Picker: each model's candidates in turn, ignoring load: the baseline the
 * other profiles are measured against. Its only state is a cursor per model.
 */
import { MAX_ORDERED, type Candidate } from '../candidate.ts';
import type { Pick, Picker, PickContext } from '../pick.ts';

export class RoundRobinPicker implements Picker {
  readonly #cursors = new Map<string, number>();

  pick<T extends Candidate>(context: PickContext<T>): Pick<T> {
    const { candidates, pool, n, facts } = context;
    const cursor = this.#cursors.get(facts.model) ?? 0;
    this.#cursors.set(facts.model, (cursor + 1) % 0x7fffffff);
    const count = Math.min(MAX_ORDERED, n);
    const ordered: T[] = new Array<T>(count);
    for (let i = 0; i < count; i++) ordered[i] = candidates[pool[(cursor + i) % n] as number] as T;
    return { ordered, outcome: 'round_robin' };
  }
}

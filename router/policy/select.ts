/**
 * Small shared pieces of the policies: ejected-endpoint filtering and a
 * top-k selector.
 */
import type { EndpointLoad } from './policy.ts';

/**
 * The candidates a policy may choose from: the ones not ejected, or all of
 * them when every one is ejected (routing to a suspect endpoint beats
 * refusing everything).
 */
export function eligible<T extends EndpointLoad>(candidates: readonly T[]): readonly T[] {
  let ejected = 0;
  for (const c of candidates) if (c.ejected) ejected++;
  if (ejected === 0 || ejected === candidates.length) return candidates;
  return candidates.filter((c) => !c.ejected);
}

/**
 * The `k` best items by `better` (a strict "a goes before b"), best first,
 * in O(n·k) without sorting everything.
 */
export function topK<T>(items: readonly T[], k: number, better: (a: T, b: T) => boolean): T[] {
  const out: T[] = [];
  for (const item of items) {
    if (out.length === k && !better(item, out[k - 1] as T)) continue;
    // Insert in place; when full, the last (worst) item falls off.
    let i = Math.min(out.length, k - 1);
    while (i > 0 && better(item, out[i - 1] as T)) {
      out[i] = out[i - 1] as T;
      i--;
    }
    out[i] = item;
  }
  return out;
}

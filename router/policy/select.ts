/**
 * Small shared pieces of the policies: ejected-endpoint filtering, a top-k
 * selector and reusable scratch arrays.
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
 * Indices of the `k` best of `n` items by `better(i, j)` (a strict "item i
 * goes before item j"), best first. Allocates only the result: policies run
 * it over every candidate of every request.
 */
export function topKIndices(n: number, k: number, better: (i: number, j: number) => boolean): number[] {
  const out: number[] = [];
  for (let item = 0; item < n; item++) {
    if (out.length === k && !better(item, out[k - 1] as number)) continue;
    let i = Math.min(out.length, k - 1);
    while (i > 0 && better(item, out[i - 1] as number)) {
      out[i] = out[i - 1] as number;
      i--;
    }
    out[i] = item;
  }
  return out;
}

/** A Float64Array of at least `n` elements, reusing `current` when it is big enough. */
export function ensureFloat64(current: Float64Array<ArrayBuffer>, n: number): Float64Array<ArrayBuffer> {
  return current.length >= n ? current : new Float64Array(Math.max(n, current.length * 2, 16));
}

/** A Uint32Array of at least `n` elements, reusing `current` when it is big enough. */
export function ensureUint32(current: Uint32Array<ArrayBuffer>, n: number): Uint32Array<ArrayBuffer> {
  return current.length >= n ? current : new Uint32Array(Math.max(n, current.length * 2, 16));
}

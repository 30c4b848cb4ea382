/**
 * Small shared pieces of scheduling: a top-k selector and reusable scratch
 * arrays, so ranking hundreds of endpoints allocates nothing per candidate.
 */

/**
 * Indices of the `k` best of `n` items by `better(i, j)` (a strict "item i
 * goes before item j"), best first, written into `out`; returns how many
 * (min(k, n)). `out` must hold at least k elements.
 */
export function topKInto(out: Uint32Array, n: number, k: number, better: (i: number, j: number) => boolean): number {
  let length = 0;
  for (let item = 0; item < n; item++) {
    if (length === k && !better(item, out[k - 1] as number)) continue;
    let i = Math.min(length, k - 1);
    while (i > 0 && better(item, out[i - 1] as number)) {
      out[i] = out[i - 1] as number;
      i--;
    }
    out[i] = item;
    if (length < k) length++;
  }
  return length;
}

/** A Float64Array of at least `n` elements, reusing `current` when it is big enough. */
export function ensureFloat64(current: Float64Array<ArrayBuffer>, n: number): Float64Array<ArrayBuffer> {
  return current.length >= n ? current : new Float64Array(Math.max(n, current.length * 2, 16));
}

/** A Uint32Array of at least `n` elements, reusing `current` when it is big enough. */
export function ensureUint32(current: Uint32Array<ArrayBuffer>, n: number): Uint32Array<ArrayBuffer> {
  return current.length >= n ? current : new Uint32Array(Math.max(n, current.length * 2, 16));
}

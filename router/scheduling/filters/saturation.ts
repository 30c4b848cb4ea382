/**
 * Filter: saturation by priority, over a pool. The test itself and what it
 * reads of an endpoint live in the core (../saturation.ts): the scheduler
 * binds the test for the request's priority and the profile hands it in.
 */

/**
 * Moves the candidates of `pool[0..n)` that are saturated for the request
 * out of the pool into `overflow` (both keep their order). Returns the count
 * left in the pool; `overflow` gets `n` minus that. A saturated endpoint is
 * no first choice, but stays a retry target: after a failed connect, a queue
 * at another engine beats an error.
 */
export function splitSaturated<T>(candidates: readonly T[], saturated: (endpoint: T) => boolean, pool: Uint32Array, n: number, overflow: Uint32Array): number {
  let kept = 0;
  let spilled = 0;
  for (let i = 0; i < n; i++) {
    const index = pool[i] as number;
    if (saturated(candidates[index] as T)) overflow[spilled++] = index;
    else pool[kept++] = index;
  }
  return kept;
}

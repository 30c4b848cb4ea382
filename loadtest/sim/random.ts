/** A float in [0, 1); the same seed always gives the same sequence. */
export type Rng = () => number;

/** mulberry32: tiny, fast, good enough for split positions, arrival gaps and coin flips. */
export function seededRng(seed: number): Rng {
  let state = seed | 0;
  return () => {
    let t = (state = (state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * xxHash32 (XXH32, Yann Collet's reference algorithm) in pure JS, reading the
 * input four bytes at a time in four independent lanes.
 *
 * Why this one: prefix keys hash up to 64 KiB of prompt per request on the
 * event loop. Measured on Node 24 (2 vCPU) over a 32 KiB prompt chained in
 * 512-byte blocks: xxh32 through a DataView 6.6 µs, murmur3 x86_32 with a
 * Uint32Array view 15 µs (22 µs reading bytes), FNV-1a 44 µs,
 * `crypto.hash('sha1')` per block 57 µs, an md5 `createHash` copied per
 * block 115 µs. The lanes let the CPU overlap the multiplies that a
 * one-lane hash chains; XXH32 passes SMHasher, so its 32 bits are as well
 * spread as rendezvous weights need. The result equals libxxhash's
 * `XXH32(bytes, len, seed)`, so a replica in another language can agree.
 */

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

/**
 * XXH32 of the bytes `[from, to)` of `view`, with `seed` (any 32-bit value,
 * signed or not). Reads little-endian words through the DataView, so it
 * needs no alignment and gives the same value on every platform.
 * @returns the 32 bits as a signed int32, which V8 keeps unboxed (an unsigned
 * result above 2^31 would be a heap allocation per call); `>>> 0` gives
 * libxxhash's unsigned value.
 */
export function xxh32(view: DataView, from: number, to: number, seed: number): number {
  const length = to - from;
  let i = from;
  let h: number;
  if (length >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    for (const limit = to - 15; i < limit; i += 16) {
      v1 = (v1 + Math.imul(view.getUint32(i, true), P2)) | 0;
      v1 = Math.imul((v1 << 13) | (v1 >>> 19), P1);
      v2 = (v2 + Math.imul(view.getUint32(i + 4, true), P2)) | 0;
      v2 = Math.imul((v2 << 13) | (v2 >>> 19), P1);
      v3 = (v3 + Math.imul(view.getUint32(i + 8, true), P2)) | 0;
      v3 = Math.imul((v3 << 13) | (v3 >>> 19), P1);
      v4 = (v4 + Math.imul(view.getUint32(i + 12, true), P2)) | 0;
      v4 = Math.imul((v4 << 13) | (v4 >>> 19), P1);
    }
    h = (((v1 << 1) | (v1 >>> 31)) + ((v2 << 7) | (v2 >>> 25)) + ((v3 << 12) | (v3 >>> 20)) + ((v4 << 18) | (v4 >>> 14))) | 0;
  } else {
    h = (seed + P5) | 0;
  }
  h = (h + length) | 0;
  for (; i + 4 <= to; i += 4) {
    h = (h + Math.imul(view.getUint32(i, true), P3)) | 0;
    h = Math.imul((h << 17) | (h >>> 15), P4);
  }
  for (; i < to; i++) {
    h = (h + Math.imul(view.getUint8(i), P5)) | 0;
    h = Math.imul((h << 11) | (h >>> 21), P1);
  }
  h ^= h >>> 15;
  h = Math.imul(h, P2);
  h ^= h >>> 13;
  h = Math.imul(h, P3);
  h ^= h >>> 16;
  return h | 0;
}

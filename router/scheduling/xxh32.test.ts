import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xxh32 } from './xxh32.ts';

const hash = (bytes: Uint8Array, seed = 0, from = 0, to = bytes.length) => xxh32(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), from, to, seed) >>> 0;

describe('xxh32', () => {
  it("equals libxxhash's XXH32 (values from libxxhash 0.8.1 through ctypes)", () => {
    assert.equal(hash(Buffer.from('')), 0x02cc5d05);
    assert.equal(hash(Buffer.from('abc')), 0x32d153ff);
    assert.equal(hash(Buffer.from('Nobody inspects the spammish repetition')), 0xe2293b2f);
    assert.equal(hash(Buffer.from('0123456789abcdef0123')), 0x6350964e);
    assert.equal(hash(Buffer.from('hello world, this is 33 bytes lon'), 123456789), 0xdf24d3eb);
    const bytes = Buffer.alloc(768);
    for (let i = 0; i < bytes.length; i++) bytes[i] = i & 0xff;
    assert.equal(hash(bytes, 0x9747b28c), 0xeaa85739);
  });

  it('hashes a range the same wherever it sits in memory (no alignment needed)', () => {
    const text = Buffer.from('the same forty bytes of text, in a range');
    const base = hash(text, 7);
    for (let offset = 1; offset < 8; offset++) {
      const shifted = Buffer.alloc(text.length + offset + 3);
      text.copy(shifted, offset);
      assert.equal(hash(shifted, 7, offset, offset + text.length), base);
    }
  });
});

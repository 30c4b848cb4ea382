import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { tenantCacheSalt, withCacheSalt } from './tenant-cache-salt.ts';

describe('tenantCacheSalt', () => {
  it('is one salt per tenant, combined with the client\'s own, the same on every call', () => {
    const a = tenantCacheSalt('team-a', undefined);
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(tenantCacheSalt('team-a', undefined), a);
    assert.notEqual(tenantCacheSalt('team-b', undefined), a, 'another tenant');
    assert.notEqual(tenantCacheSalt('team-a', 'doc-1'), a, "the client's salt partitions further");
    assert.notEqual(tenantCacheSalt('team-a', 'doc-1'), tenantCacheSalt('team-b', 'doc-1'), "the same client salt from another tenant is another salt");
    assert.notEqual(tenantCacheSalt('team-ab', 'c'), tenantCacheSalt('team-a', 'bc'), 'framed by length');
    assert.notEqual(tenantCacheSalt('team-b', a), a, "a tenant that sends another's salt as its own gets neither");
  });
});

describe('withCacheSalt', () => {
  it('appends the member before the closing brace and leaves every other byte as it was', () => {
    const body = Buffer.from('{"model":"m","messages":[{"role":"user","content":"}"}]}\r\n');
    const salted = withCacheSalt(body, 'SALT');
    assert.equal(salted.toString(), '{"model":"m","messages":[{"role":"user","content":"}"}],"cache_salt":"SALT"}\r\n');
    assert.equal(body.toString(), '{"model":"m","messages":[{"role":"user","content":"}"}]}\r\n', 'the original is kept (a retry replays it)');
    assert.equal(withCacheSalt(Buffer.from(' { } '), 'S').toString(), ' { "cache_salt":"S"} ', 'an empty object gets no comma');
  });

  it("overrides the client's own cache_salt for a JSON parser (the last duplicate member wins)", () => {
    const salted = withCacheSalt(Buffer.from('{"cache_salt":"mine","model":"m"}'), 'tenant-salt');
    assert.equal((JSON.parse(salted.toString()) as { cache_salt: string }).cache_salt, 'tenant-salt');
  });

  it('keeps any JSON object valid and equal but for cache_salt', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.constantFrom('', ' ', '\n', '\t\r\n'), (object, space) => {
        const body = Buffer.from(`${space}${JSON.stringify(object, null, space === '' ? undefined : 1)}${space}`);
        const parsed = JSON.parse(withCacheSalt(body, 'abc_-09').toString()) as Record<string, unknown>;
        assert.equal(parsed['cache_salt'], 'abc_-09');
        const expected = JSON.parse(body.toString()) as Record<string, unknown>;
        delete expected['cache_salt'];
        delete parsed['cache_salt'];
        assert.deepEqual(parsed, expected);
      }),
    );
  });

  it('refuses a body that is not an object', () => {
    assert.throws(() => withCacheSalt(Buffer.from('[1]'), 'S'), /not a JSON object/);
    assert.throws(() => withCacheSalt(Buffer.from(''), 'S'), /not a JSON object/);
  });
});

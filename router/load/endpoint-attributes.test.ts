import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttributeKey, EndpointAttributes } from './endpoint-attributes.ts';

describe('endpoint attributes keep plugin data by typed key', () => {
  it('stores, replaces and removes a value under its key', () => {
    const attributes = new EndpointAttributes();
    const hits = new AttributeKey<number>('test.hits');
    assert.equal(attributes.get(hits), undefined);
    assert.equal(attributes.has(hits), false);
    attributes.set(hits, 1);
    attributes.set(hits, (attributes.get(hits) ?? 0) + 1);
    assert.equal(attributes.get(hits), 2);
    assert.equal(attributes.has(hits), true);
    assert.equal(attributes.delete(hits), true);
    assert.equal(attributes.delete(hits), false);
    assert.equal(attributes.get(hits), undefined);
  });

  it('tells keys apart by identity, not by name', () => {
    const attributes = new EndpointAttributes();
    const mine = new AttributeKey<string>('shared.name');
    const theirs = new AttributeKey<string>('shared.name');
    attributes.set(mine, 'mine');
    assert.equal(attributes.get(theirs), undefined, 'another plugin choosing the same name reads nothing of mine');
    attributes.set(theirs, 'theirs');
    assert.deepEqual([attributes.get(mine), attributes.get(theirs)], ['mine', 'theirs']);
  });

  it('keeps each endpoint its own values', () => {
    const seen = new AttributeKey<{ readonly at: number }>('test.seen');
    const a = new EndpointAttributes();
    const b = new EndpointAttributes();
    a.set(seen, { at: 1 });
    assert.deepEqual(a.get(seen), { at: 1 });
    assert.equal(b.get(seen), undefined);
  });

  it('refuses a value of the wrong type at compile time', () => {
    const attributes = new EndpointAttributes();
    const count = new AttributeKey<number>('test.count');
    // @ts-expect-error a number key takes no string
    attributes.set(count, 'three');
    const wide = new AttributeKey<number | string>('test.wide');
    // @ts-expect-error a key is tied to its type both ways: a number key is not a number-or-string key
    const narrowed: AttributeKey<number> = wide;
    assert.ok(narrowed);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstHeaderValue } from './header-value.ts';

describe('firstHeaderValue', () => {
  it('returns a single value as it is, and the first line of a list', () => {
    assert.equal(firstHeaderValue('high'), 'high');
    assert.equal(firstHeaderValue(''), '');
    assert.equal(firstHeaderValue(['a', 'b']), 'a');
  });

  it('returns undefined for an absent header or an empty list', () => {
    assert.equal(firstHeaderValue(undefined), undefined);
    assert.equal(firstHeaderValue([]), undefined);
  });
});

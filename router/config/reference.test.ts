import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { REFERENCE_PATH, renderReference } from './reference.ts';

describe('configuration reference', () => {
  it('is in sync with the schema (run `npm run docs:config` after changing it)', () => {
    assert.equal(readFileSync(REFERENCE_PATH, 'utf8'), renderReference());
  });
});

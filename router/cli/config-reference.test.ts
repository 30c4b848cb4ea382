import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { REFERENCE_PATH } from '../config/reference.ts';
import { configurationReference } from './config-reference.ts';

describe('configuration reference', () => {
  it('is in sync with the schema and the registered plugins (run `npm run docs:config` after changing either)', () => {
    assert.equal(readFileSync(REFERENCE_PATH, 'utf8'), configurationReference());
  });
});

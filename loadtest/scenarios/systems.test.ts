import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { routerCheckout } from './systems.ts';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));

test('--before DIR: a checkout with its modules is named switchyard@COMMIT, with no space for request ids to carry', () => {
  const commit = execFileSync('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const checkout = routerCheckout(REPO);
  assert.deepEqual(checkout, { dir: REPO, commit, name: `switchyard@${commit}` });
  assert.doesNotMatch(checkout?.name ?? '', /\s/);
});

test('--before DIR: no flag, no checkout; a folder that is not a checkout with its modules is refused before anything starts', () => {
  assert.equal(routerCheckout(undefined), undefined);
  const empty = mkdtempSync(join(tmpdir(), 'switchyard-not-a-checkout-'));
  try {
    assert.throws(() => routerCheckout(empty), /not a switchyard checkout with its modules installed/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readApiKey, redact } from './api-key.ts';
import { UsageError } from './options.ts';

const KEY = 'sk-test-7d1e0c9a55';

describe('the API key file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-key-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string, mode: number) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };

  it('reads one key without its newline; a private file gives no warning, a world-readable one a warning without the key', () => {
    assert.deepEqual(readApiKey(file('private', `${KEY}\n`, 0o600)), { key: KEY, warning: undefined });
    const shared = readApiKey(file('shared', KEY, 0o644));
    assert.equal(shared.key, KEY);
    assert.match(shared.warning ?? '', /readable by every user.*mode 644/);
    assert.doesNotMatch(shared.warning ?? '', new RegExp(KEY));
  });

  it('refuses an empty, multi-line or missing file without quoting its content', () => {
    for (const [name, text, pattern] of [['empty', ' \n', /is empty/], ['two', `${KEY}\nsk-other-secret\n`, /must hold one key/]] as const) {
      assert.throws(() => readApiKey(file(name, text, 0o600)), (err: unknown) => err instanceof UsageError && pattern.test(err.message) && !err.message.includes('sk-'));
    }
    assert.throws(() => readApiKey(join(dir, 'missing')), /cannot read .*ENOENT/);
  });

  it('redacts every occurrence of the key', () => {
    assert.equal(redact(`Bearer ${KEY} and ${KEY}`, KEY), 'Bearer [api key] and [api key]');
    assert.equal(redact('nothing', undefined), 'nothing');
  });
});

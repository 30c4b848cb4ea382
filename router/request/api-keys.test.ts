import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../config/load.ts';
import { ApiKeysFile, type ApiKeysFileLog } from './api-keys-file.ts';
import { ApiKeysFileError, parseApiKeys } from './api-keys.ts';

const SECRET = 'sk-live-7f3a9c1e5b2d4068';
const OTHER = 'sk-other-0c8e2b7d9a61';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const YAML_FILE = `
tenants:
  team-a: { requestsPerSecond: 50, burst: 100, maxConcurrent: 20 }
  batch:
keys:
  - key: ${SECRET}
    tenant: team-a
  - sha256: ${sha256(OTHER).toUpperCase()}
    tenant: batch
`;

/** The message of what `parseApiKeys(text)` throws. */
function problemWith(text: string): string {
  try {
    parseApiKeys(text);
  } catch (err) {
    assert.ok(err instanceof ApiKeysFileError, `threw ${String(err)}`);
    return err.message;
  }
  assert.fail('parsed');
}

describe('parseApiKeys', () => {
  it('reads YAML, with plaintext keys and SHA-256 digests, and tenants without limits', () => {
    const keys = parseApiKeys(YAML_FILE);
    assert.equal(keys.size, 2);
    assert.deepEqual(keys.authenticate(`Bearer ${SECRET}`), { kind: 'tenant', tenant: 'team-a', limits: { requestsPerSecond: 50, burst: 100, maxConcurrent: 20 } });
    assert.deepEqual(keys.authenticate(`bearer  ${OTHER}`), { kind: 'tenant', tenant: 'batch', limits: {} }, 'the scheme is case-insensitive');
  });

  it('reads JSON', () => {
    const keys = parseApiKeys(JSON.stringify({ tenants: { t: { maxConcurrent: 2 } }, keys: [{ key: SECRET, tenant: 't' }] }));
    assert.deepEqual(keys.authenticate(`Bearer ${SECRET}`), { kind: 'tenant', tenant: 't', limits: { maxConcurrent: 2 } });
  });

  it('reads a tenant\'s priority class, apart from its quota, and refuses any other class', () => {
    const keys = parseApiKeys(JSON.stringify({ tenants: { t: { maxConcurrent: 2, priority: 'low' }, u: {} }, keys: [{ key: SECRET, tenant: 't' }, { key: OTHER, tenant: 'u' }] }));
    assert.deepEqual(keys.authenticate(`Bearer ${SECRET}`), { kind: 'tenant', tenant: 't', limits: { maxConcurrent: 2 }, priority: 'low' });
    assert.deepEqual(keys.authenticate(`Bearer ${OTHER}`), { kind: 'tenant', tenant: 'u', limits: {} });
    assert.throws(() => parseApiKeys(JSON.stringify({ tenants: { t: { priority: 'urgent' } }, keys: [] })), /tenants\.t\.priority/);
  });

  it('tells a missing key from a wrong one, and a wrong scheme is wrong', () => {
    const keys = parseApiKeys(YAML_FILE);
    assert.deepEqual(keys.authenticate(undefined), { kind: 'missing' });
    assert.deepEqual(keys.authenticate(''), { kind: 'missing' });
    assert.deepEqual(keys.authenticate(`Bearer ${SECRET}x`), { kind: 'invalid' });
    assert.deepEqual(keys.authenticate(`Basic ${Buffer.from(`u:${SECRET}`).toString('base64')}`), { kind: 'invalid' });
    assert.deepEqual(keys.authenticate(SECRET), { kind: 'invalid' });
    assert.deepEqual(keys.authenticate('Bearer'), { kind: 'invalid' });
  });

  it('refuses a bad file with where and what, never quoting a key', () => {
    const cases: [string, RegExp][] = [
      [`keys:\n  - key: ${SECRET}\n   tenant: a\n`, /^not valid YAML or JSON \([A-Z_]+ at line \d+, column \d+\)$/],
      [`tenants: {}\nkeys:\n  - key: ${SECRET}\n    tenant: nobody\n`, /^keys\[0\]\.tenant: names no tenant listed under tenants$/],
      [`tenants: {a: {}}\nkeys:\n  - key: ${SECRET}\n    sha256: ${sha256(SECRET)}\n    tenant: a\n`, /^keys\[0\]: give exactly one of sha256 and key$/],
      [`tenants: {a: {}}\nkeys:\n  - {key: k, tenant: a, ${SECRET}: a}\n`, /^keys\[0\]: unknown field/],
      [`tenants: {a: {}}\nkeys: []\n${SECRET}: 1\n`, /^the file: unknown field/],
      [`tenants: {"${SECRET} x": {}}\nkeys: []\n`, /^tenants\.<name>: tenant names are/],
      [`tenants: {a: {burst: 3}}\nkeys: []\n`, /^tenants\.a\.burst: burst needs requestsPerSecond$/],
      [`tenants: {a: {requestsPerSecond: -1}}\nkeys: []\n`, /^tenants\.a\.requestsPerSecond: /],
      [`tenants: {a: {}, b: {}}\nkeys:\n  - {key: ${SECRET}, tenant: a}\n  - {sha256: ${sha256(SECRET)}, tenant: b}\n`, /^keys\[1\]: the same key is listed for two tenants$/],
      [`tenants: {a: {}}\nkeys:\n  - {key: "${SECRET} with spaces", tenant: a}\n`, /^keys\[0\]\.key: must be printable ASCII without spaces/],
      [`tenants: {a: {}}\nkeys:\n  - {sha256: ${SECRET}, tenant: a}\n`, /^keys\[0\]\.sha256: must be 64 hex digits/],
      [`tenants: {a: {}}\n`, /^keys: /],
      ['', /^the file: /],
    ];
    for (const [text, expected] of cases) {
      const message = problemWith(text);
      assert.match(message, expected);
      assert.ok(!message.includes(SECRET.slice(3, 12)), `quotes key material: ${message}`);
    }
  });
});

/** A log that keeps what it was told. */
function recordingLog(): ApiKeysFileLog & { lines: { level: string; fields: Record<string, unknown>; message: string }[] } {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  return {
    lines,
    info: (fields, message) => void lines.push({ level: 'info', fields, message }),
    error: (fields, message) => void lines.push({ level: 'error', fields, message }),
  };
}

describe('ApiKeysFile', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-keys-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('at start-up, a missing or bad file is a ConfigError naming the option and the file', () => {
    const missing = join(dir, 'missing.yaml');
    assert.throws(() => ApiKeysFile.open(missing, recordingLog()), (err: unknown) => err instanceof ConfigError && err.message === `auth.apiKeysFile ${missing}: cannot read it (ENOENT)`);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, `tenants: {}\nkeys:\n  - key: ${SECRET}\n    tenant: nobody\n`);
    assert.throws(
      () => ApiKeysFile.open(bad, recordingLog()),
      (err: unknown) => err instanceof ConfigError && err.message === `auth.apiKeysFile ${bad}: keys[0].tenant: names no tenant listed under tenants`,
    );
  });

  it('reloads when the content changes, even with the same size and mtime', async () => {
    const path = join(dir, 'keys.yaml');
    const body = (key: string) => `tenants: {a: {}}\nkeys:\n  - {key: ${key}, tenant: a}\n`;
    writeFileSync(path, body(SECRET));
    const log = recordingLog();
    const file = ApiKeysFile.open(path, log);
    assert.equal(await file.check(), 'unchanged');
    const mtime = new Date('2026-01-01T00:00:00Z');
    utimesSync(path, mtime, mtime);
    // Same length, same mtime, other content.
    const swapped = SECRET.slice(0, -1) + (SECRET.endsWith('8') ? '9' : '8');
    writeFileSync(path, body(swapped));
    utimesSync(path, mtime, mtime);
    assert.equal(await file.check(), 'reloaded');
    assert.equal(file.keys.authenticate(`Bearer ${swapped}`).kind, 'tenant');
    assert.equal(file.keys.authenticate(`Bearer ${SECRET}`).kind, 'invalid');
    assert.deepEqual(log.lines, [{ level: 'info', fields: { file: path, keys: 1, tenants: 1 }, message: 'API keys reloaded' }]);
  });

  it('follows a Kubernetes Secret mount (a ..data symlink swapped to a new directory)', async () => {
    const mount = join(dir, 'secret');
    mkdirSync(join(mount, '..2026_01_01_a'), { recursive: true });
    writeFileSync(join(mount, '..2026_01_01_a', 'keys.yaml'), `tenants: {a: {}}\nkeys:\n  - {key: ${SECRET}, tenant: a}\n`);
    symlinkSync('..2026_01_01_a', join(mount, '..data'));
    symlinkSync(join('..data', 'keys.yaml'), join(mount, 'keys.yaml'));
    const file = ApiKeysFile.open(join(mount, 'keys.yaml'), recordingLog());
    mkdirSync(join(mount, '..2026_01_01_b'));
    writeFileSync(join(mount, '..2026_01_01_b', 'keys.yaml'), `tenants: {b: {}}\nkeys:\n  - {key: ${OTHER}, tenant: b}\n`);
    // The kubelet's atomic swap: a new link renamed over ..data.
    symlinkSync('..2026_01_01_b', join(mount, '..data_tmp'));
    renameSync(join(mount, '..data_tmp'), join(mount, '..data'));
    assert.equal(await file.check(), 'reloaded');
    assert.deepEqual(file.keys.authenticate(`Bearer ${OTHER}`), { kind: 'tenant', tenant: 'b', limits: {} });
  });

  it('keeps the last good keys through a bad or missing file, logging each problem once and no key material', async () => {
    const path = join(dir, 'flaky.yaml');
    const good = `tenants: {a: {}}\nkeys:\n  - {key: ${SECRET}, tenant: a}\n`;
    writeFileSync(path, good);
    const log = recordingLog();
    const file = ApiKeysFile.open(path, log);
    writeFileSync(path, `tenants: {a: {}}\nkeys:\n  - {key: ${OTHER}, tenant: nobody}\n`);
    assert.equal(await file.check(), 'kept');
    assert.equal(await file.check(), 'unchanged', 'the same problem again');
    assert.equal(file.keys.authenticate(`Bearer ${SECRET}`).kind, 'tenant');
    rmSync(path);
    assert.equal(await file.check(), 'kept');
    assert.equal(await file.check(), 'unchanged');
    assert.equal(file.keys.authenticate(`Bearer ${SECRET}`).kind, 'tenant');
    writeFileSync(path, good.replace('{a: {}}', '{a: {maxConcurrent: 1}}'));
    assert.equal(await file.check(), 'reloaded');
    assert.deepEqual(
      log.lines.map((l) => [l.level, l.fields['problem'] ?? '']),
      [
        ['error', 'keys[0].tenant: names no tenant listed under tenants'],
        ['error', 'cannot read it (ENOENT)'],
        ['info', ''],
      ],
    );
    const logged = JSON.stringify(log.lines);
    assert.ok(!logged.includes(SECRET) && !logged.includes(OTHER));
  });
});

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { SessionNames, legacySessionName, sessionNamesFor } from './session-names.ts';

const SECRET = 'an-install-secret-of-32-characters-or-more';

describe('SessionNames', () => {
  const names = new SessionNames(SECRET);

  it('names a session by tenant, model and key: the same key for two tenants or two models is two sessions', () => {
    const a = names.name('team-a', 'chat', 'user-42');
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(names.name('team-a', 'chat', 'user-42'), a, 'pure');
    assert.notEqual(names.name('team-b', 'chat', 'user-42'), a, 'another tenant');
    assert.notEqual(names.name('team-a', 'embed', 'user-42'), a, 'another model');
    assert.notEqual(names.name(undefined, 'chat', 'user-42'), a, 'no tenant (API keys off)');
  });

  it('frames fields by length, so shifting bytes between them never gives the same name', () => {
    const seen = new Set([
      names.name('ab', 'c', 'd'),
      names.name('a', 'bc', 'd'),
      names.name('a', 'b', 'cd'),
      names.name(undefined, 'abc', 'd'),
      names.name(undefined, 'ab', 'cd'),
    ]);
    assert.equal(seen.size, 5);
  });

  it('is keyed: another secret gives other names, and no name is the plain SHA-256 of the key', () => {
    const key = 'alice@example.com';
    const name = names.name(undefined, 'chat', key);
    assert.notEqual(new SessionNames(`${SECRET}x`).name(undefined, 'chat', key), name);
    assert.notEqual(name, createHash('sha256').update(key).digest('base64url'));
    assert.equal(legacySessionName(key), createHash('sha256').update(key).digest('base64url'), 'the old name, read during a rolling upgrade');
  });

  it('derives the same secret on every replica from the install-wide value when none is configured', () => {
    const one = SessionNames.derivedFrom('switchyard:').name('t', 'm', 'k');
    assert.equal(SessionNames.derivedFrom('switchyard:').name('t', 'm', 'k'), one);
    assert.notEqual(SessionNames.derivedFrom('other-install:').name('t', 'm', 'k'), one);
  });
});

describe('sessionNamesFor', () => {
  const fail = (message: string) => new Error(message);

  it('reads the secret file, refuses a short secret, and warns only when a derived secret names keys in Redis', () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const fromFile = sessionNamesFor({ keySecretFile: '/s', keyPrefix: 'p:', shared: true }, () => SECRET, warn, fail);
    assert.equal(fromFile.name('t', 'm', 'k'), new SessionNames(SECRET).name('t', 'm', 'k'));
    assert.throws(() => sessionNamesFor({ keySecretFile: '/s', keyPrefix: 'p:', shared: true }, () => 'short', warn, fail), /sessions\.keySecretFile \/s: shorter than 32/);
    assert.deepEqual(warnings, []);
    const derived = sessionNamesFor({ keySecretFile: undefined, keyPrefix: 'p:', shared: false }, () => assert.fail('no file'), warn, fail);
    assert.equal(derived.name('t', 'm', 'k'), SessionNames.derivedFrom('p:').name('t', 'm', 'k'));
    assert.deepEqual(warnings, [], 'no Redis: nothing is stored, nothing to warn about');
    sessionNamesFor({ keySecretFile: undefined, keyPrefix: 'p:', shared: true }, () => assert.fail('no file'), warn, fail);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /placement stays consistent/i);
  });
});

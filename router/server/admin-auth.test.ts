import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ADMIN_REALM, adminAuthorized, adminTokenDigest, needsAdminToken, unauthorizedAnswer } from './admin-auth.ts';

const TOKEN = 'adm-3f9c1e7b2a';
const digest = adminTokenDigest(TOKEN);

describe('admin token', () => {
  it('accepts the token as a bearer credential, the scheme in any case', () => {
    assert.equal(adminAuthorized(`Bearer ${TOKEN}`, digest), true);
    assert.equal(adminAuthorized(`bearer ${TOKEN}`, digest), true);
    assert.equal(adminAuthorized(`BEARER  ${TOKEN} `, digest), true);
  });

  it('refuses a missing header, another scheme, and any other token', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer ', TOKEN, `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN} extra`, `Bearer ${TOKEN.toUpperCase()}`]) {
      assert.equal(adminAuthorized(header, digest), false, JSON.stringify(header));
    }
  });

  it('keeps only a 32-byte digest of the token', () => {
    assert.equal(digest.length, 32);
    assert.ok(!Buffer.from(digest).toString('latin1').includes(TOKEN));
  });

  it('never puts the probes behind the token; everything else is', () => {
    assert.equal(needsAdminToken('/livez'), false);
    assert.equal(needsAdminToken('/readyz'), false);
    for (const path of ['/metrics', '/debug/endpoints', '/debug/', '/', '/livez/', '//livez', '/readyz/../debug/endpoints', 'http://x/debug/endpoints']) {
      assert.equal(needsAdminToken(path), true, path);
    }
  });

  it('answers 401 with a Bearer challenge and the OpenAI-style error body', () => {
    const answer = unauthorizedAnswer();
    assert.equal(answer.status, 401);
    assert.equal(answer.headers['www-authenticate'], `Bearer realm="${ADMIN_REALM}"`);
    assert.equal(answer.headers['content-length'], String(Buffer.byteLength(answer.body)));
    const body = JSON.parse(answer.body) as { error: { type: string; code: string; param: null; message: string } };
    assert.equal(body.error.code, 'SWITCHYARD_UNAUTHORIZED');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(body.error.param, null);
  });
});

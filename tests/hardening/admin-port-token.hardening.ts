/**
 * The admin port binds 0.0.0.0 by default, and `/debug/endpoints` shows pod
 * IPs, namespaces, selectors, Kubernetes API errors and the model inventory.
 * There was no way to protect it. With `adminTokenFile`, `/metrics` and
 * `/debug/*` need the bearer token; the probes on both ports never do, and
 * without a token the port stays open for Prometheus and the kubelet.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../router/config/load.ts';
import { Router } from '../../router/compose.ts';
import { errorOf, send, startFleet, type RawResponse } from '../kit/harness.ts';

const TOKEN = 'adm-7Kq2Zr9Xw4Kp1Lm8';
const dir = mkdtempSync(join(tmpdir(), 'switchyard-admin-token-'));
const get = (url: string, headers: Record<string, string> = {}) => send(url, { method: 'GET', headers });

function assertUnauthorized(response: RawResponse, what: string): void {
  assert.equal(response.status, 401, what);
  assert.equal(response.headers['www-authenticate'], 'Bearer realm="switchyard-admin"', what);
  const error = errorOf(response);
  assert.equal(error.code, 'SWITCHYARD_UNAUTHORIZED', what);
  const body = response.body.toString('utf8');
  assert.ok(!body.includes('127.0.0.1') && !body.includes('switchyard_'), `${what}: the 401 leaks nothing`);
}

test('regression: the admin port served /debug/endpoints and /metrics (pod IPs, API errors, model inventory) to anyone who could reach it', async () => {
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const fleet = await startFleet([{ model: 'm-admin' }], ['--admin-token-file', tokenFile]);
  try {
    for (const path of ['/debug/endpoints', '/metrics', '/debug/nothing-here', '/']) {
      assertUnauthorized(await get(`${fleet.admin}${path}`), `${path} without a token`);
      assertUnauthorized(await get(`${fleet.admin}${path}`, { authorization: 'Bearer wrong-token' }), `${path} with a wrong token`);
      assertUnauthorized(await get(`${fleet.admin}${path}`, { authorization: `Basic ${TOKEN}` }), `${path} with another scheme`);
    }
    const debug = await get(`${fleet.admin}/debug/endpoints`, { authorization: `Bearer ${TOKEN}` });
    assert.equal(debug.status, 200);
    assert.match(debug.body.toString('utf8'), /"url":"http:\/\/127\.0\.0\.1:\d+"/);
    const metrics = await get(`${fleet.admin}/metrics`, { authorization: `Bearer ${TOKEN}` });
    assert.equal(metrics.status, 200);
    assert.match(metrics.body.toString('utf8'), /^switchyard_in_flight_requests /m);
    const unknown = await get(`${fleet.admin}/debug/nothing-here`, { authorization: `Bearer ${TOKEN}` });
    assert.equal(unknown.status, 404, 'with the token, an unknown path is an honest 404');

    // Probes never need it: not on the admin port (kubelet), not on the traffic port, whatever is sent.
    for (const base of [fleet.admin, fleet.base]) {
      for (const path of ['/livez', '/readyz']) {
        assert.equal((await get(`${base}${path}`)).status, 200, `${base}${path}`);
        assert.equal((await get(`${base}${path}`, { authorization: 'Bearer wrong-token' })).status, 200, `${base}${path} with a wrong token`);
      }
    }
  } finally {
    await fleet.close();
  }
});

test('regression: without an admin token, /metrics, /debug and the probes must stay open to Prometheus and the kubelet', async () => {
  const fleet = await startFleet([{ model: 'm-admin-open' }]);
  try {
    for (const path of ['/metrics', '/debug/endpoints', '/livez', '/readyz']) {
      assert.equal((await get(`${fleet.admin}${path}`)).status, 200, path);
    }
  } finally {
    await fleet.close();
  }
});

test('regression: an unusable admin token file must stop start-up, not lock the port with a token no one can send', () => {
  for (const [name, content, problem] of [
    ['empty', '\n', /empty/],
    ['two-lines', `${TOKEN}\nsecond-line\n`, /holds 2 lines/],
  ] as const) {
    const file = join(dir, name);
    writeFileSync(file, content);
    const loaded = loadConfig(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--admin-token-file', file], {});
    assert.equal(loaded.kind, 'config');
    if (loaded.kind !== 'config') return;
    assert.throws(
      () => new Router(loaded.config),
      (err: unknown) => err instanceof ConfigError && err.message.includes(`adminTokenFile ${file}`) && problem.test(err.message) && !err.message.includes(TOKEN),
      name,
    );
  }
});

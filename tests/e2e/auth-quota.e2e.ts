/**
 * API keys and tenant quotas end to end: a router with `auth.apiKeysFile`
 * and a real redis-server, over a real engine simulator.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createLogger } from '../../router/log.ts';
import { startRedisServer, type RedisServer } from '../kit/redis/redis-server.ts';
import { errorOf, postJson, send, startFleet, startRouterProcess, waitFor, type Fleet, type RawResponse } from '../kit/harness.ts';

const MODEL = 'auth-model';
const FREE_KEY = 'sk-free-4f1d9a7c2e';
const RATED_KEY = 'sk-rated-8b3e6c0a91';
const SINGLE_KEY = 'sk-single-2c7f5e9d13';
const NEW_KEY = 'sk-new-6a0d3b8e47';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function keysFile(freeKey: string): string {
  return `
tenants:
  free: {}
  rated: { requestsPerSecond: 0.5, burst: 2 }
  single: { maxConcurrent: 1 }
keys:
  - key: ${freeKey}
    tenant: free
  - sha256: ${sha256(RATED_KEY)}
    tenant: rated
  - key: ${SINGLE_KEY}
    tenant: single
`;
}

let serial = 0;
function chat(base: string, key: string | undefined, headers: Record<string, string> = {}): Promise<RawResponse> {
  return postJson(
    `${base}/v1/chat/completions`,
    { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
    { 'x-request-id': `auth-${++serial}`, ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers },
  );
}

describe('API keys and quotas', () => {
  let dir: string;
  let path: string;
  let redis: RedisServer;
  let fleet: Fleet;
  const logs: string[] = [];

  /** Replaces the keys file as a Secret update does: a whole new file renamed over the old one. */
  const replaceKeysFile = (text: string) => {
    writeFileSync(`${path}.next`, text);
    renameSync(`${path}.next`, path);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-auth-'));
    path = join(dir, 'keys.yaml');
    writeFileSync(path, keysFile(FREE_KEY));
    redis = await startRedisServer();
    const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => void (logs.push(chunk.toString('utf8')), done()) }));
    fleet = await startFleet(
      [{ model: MODEL, knobs: { ttftMs: 0, itlMs: 0 } }],
      ['--auth-api-keys-file', path, '--auth-reload-interval-ms', '50', '--redis-url', redis.url, '--redis-replica-ttl-ms', '1000'],
      [],
      { logger },
    );
    // Quotas are checked in Redis from here on (the degraded path is tested in router/state).
    await waitFor(() => logs.some((line) => line.includes('shared state (Redis) up')));
  });
  after(async () => {
    await fleet.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a missing or invalid key 401 with WWW-Authenticate, before the engine sees anything', async () => {
    const missing = await chat(fleet.base, undefined, { 'x-request-id': 'no-key' });
    assert.equal(missing.status, 401);
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="switchyard"');
    assert.deepEqual(errorOf(missing), { message: 'This server needs an API key: send Authorization: Bearer <key>.', type: 'invalid_request_error', param: null, code: 'SWITCHYARD_UNAUTHORIZED' });
    const invalid = await chat(fleet.base, 'sk-not-a-key', { 'x-request-id': 'bad-key' });
    assert.equal(invalid.status, 401);
    assert.equal(invalid.headers['www-authenticate'], 'Bearer realm="switchyard", error="invalid_token"');
    assert.equal(errorOf(invalid).code, 'SWITCHYARD_UNAUTHORIZED');
    const engine = fleet.engines[0]!;
    assert.equal(engine.received('no-key'), undefined);
    assert.equal(engine.received('bad-key'), undefined);
    const metrics = await (await fetch(`${fleet.admin}/metrics`)).text();
    assert.match(metrics, /switchyard_auth_failures_total\{reason="missing"\} [1-9]/);
    assert.match(metrics, /switchyard_auth_failures_total\{reason="invalid"\} [1-9]/);
  });

  it('needs the key for GET /v1/models too, never for /livez and /readyz on either port', async () => {
    assert.equal((await send(`${fleet.base}/v1/models`, { method: 'GET' })).status, 401);
    const models = await send(`${fleet.base}/v1/models`, { method: 'GET', headers: { authorization: `Bearer ${FREE_KEY}` } });
    assert.equal(models.status, 200);
    assert.deepEqual((JSON.parse(models.body.toString('utf8')) as { data: { id: string }[] }).data.map((m) => m.id), [MODEL]);
    for (const base of [fleet.base, fleet.admin]) {
      for (const probe of ['/livez', '/readyz']) assert.equal((await send(`${base}${probe}`, { method: 'GET' })).status, 200, `${base}${probe}`);
    }
  });

  it("regression: vLLM's GET /health on the traffic port answered 404, and benchmark clients that check it first (GuideLLM) refused to start", async () => {
    const health = await send(`${fleet.base}/health`, { method: 'GET' });
    assert.equal(health.status, 200, 'ready, and no key needed, as on vLLM');
    assert.equal(health.body.length, 0, 'an empty body, as vLLM answers');
    assert.equal((await send(`${fleet.base}/health`, { method: 'POST' })).status, 405);
  });

  it("consumes the client's Authorization header: the engine never sees it", async () => {
    const response = await chat(fleet.base, FREE_KEY, { 'x-request-id': 'with-key' });
    assert.equal(response.status, 200);
    const received = fleet.engines[0]!.received('with-key');
    assert.ok(received !== undefined);
    assert.equal(received.headers['authorization'], undefined);
    assert.equal(response.headers['x-ratelimit-limit-requests'], undefined, 'no rate headers for a tenant without a rate limit');
  });

  it('answers over the rate quota 429 with Retry-After and x-ratelimit headers, which successes carry too', async () => {
    const first = await chat(fleet.base, RATED_KEY);
    const second = await chat(fleet.base, RATED_KEY);
    const third = await chat(fleet.base, RATED_KEY, { 'x-request-id': 'over-rate' });
    assert.deepEqual([first.status, second.status, third.status], [200, 200, 429]);
    assert.deepEqual(
      [first, second, third].map((r) => [r.headers['x-ratelimit-limit-requests'], r.headers['x-ratelimit-remaining-requests']]),
      [['2', '1'], ['2', '0'], ['2', '0']],
    );
    // 0.5 req/s with a burst of 2: whole again 4 s after the second request.
    assert.match(String(second.headers['x-ratelimit-reset-requests']), /^(3\.\d+|4)s$/);
    assert.deepEqual(errorOf(third), {
      message: 'This API key is over its request rate quota; retry after the Retry-After delay.',
      type: 'rate_limit_exceeded',
      param: null,
      code: 'SWITCHYARD_QUOTA_EXCEEDED',
    });
    const retryAfter = Number(third.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2, `Retry-After: ${third.headers['retry-after']}`);
    assert.equal(fleet.engines[0]!.received('over-rate'), undefined);
    // Decided in Redis, under the tenant's hash tag.
    const stored = await fetchRedisKeys(redis, 'switchyard:{quota:rated}:*');
    assert.deepEqual(stored, ['switchyard:{quota:rated}:rate']);
    const metrics = await (await fetch(`${fleet.admin}/metrics`)).text();
    assert.match(metrics, /switchyard_quota_rejections_total\{tenant="rated",limit="rate"\} 1/);
  });

  it('answers over the concurrency quota 429, and gives the slot back exactly once when a request ends', async () => {
    // Requests refused after the quota stage (a bad body here) give their slot back too.
    for (let i = 0; i < 2; i++) {
      const bad = await send(`${fleet.base}/v1/chat/completions`, { headers: { 'content-type': 'application/json', authorization: `Bearer ${SINGLE_KEY}` }, body: '{"model": ' });
      assert.equal(bad.status, 400);
    }
    const held = new AbortController();
    const first = fetch(`${fleet.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SINGLE_KEY}`, 'x-request-id': 'held', 'x-sim-ttft-ms': '60000' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hold' }] }),
      signal: held.signal,
    }).catch(() => undefined);
    await waitFor(() => fleet.engines[0]!.received('held') !== undefined);
    const refused = await chat(fleet.base, SINGLE_KEY);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(errorOf(refused).code, 'SWITCHYARD_QUOTA_EXCEEDED');
    held.abort();
    await first;
    await waitFor(() => fleet.router.inFlight === 0);
    assert.equal((await chat(fleet.base, SINGLE_KEY)).status, 200);
    // One slot came back, not two: holding one again leaves none.
    const again = new AbortController();
    const second = fetch(`${fleet.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SINGLE_KEY}`, 'x-request-id': 'held-again', 'x-sim-ttft-ms': '60000' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hold' }] }),
      signal: again.signal,
    }).catch(() => undefined);
    await waitFor(() => fleet.engines[0]!.received('held-again') !== undefined);
    assert.equal((await chat(fleet.base, SINGLE_KEY)).status, 429);
    again.abort();
    await second;
  });

  it('reloads the keys file when it changes, and keeps the last good keys through a broken one', async () => {
    replaceKeysFile(keysFile(NEW_KEY));
    await waitFor(() => logs.some((line) => line.includes('API keys reloaded')));
    assert.equal((await chat(fleet.base, NEW_KEY)).status, 200);
    assert.equal((await chat(fleet.base, FREE_KEY)).status, 401, 'the removed key no longer works');
    replaceKeysFile(`tenants: {}\nkeys:\n  - {key: ${FREE_KEY}, tenant: nobody}\n`);
    await waitFor(() => logs.some((line) => line.includes('API keys file not reloaded')));
    // Several more polls of the same broken file: still one error, and the keys in force still work.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await chat(fleet.base, NEW_KEY)).status, 200);
    assert.equal((await chat(fleet.base, FREE_KEY)).status, 401);
    assert.equal(logs.filter((line) => line.includes('API keys file not reloaded')).length, 1);
    const everything = logs.join('');
    for (const key of [FREE_KEY, RATED_KEY, SINGLE_KEY, NEW_KEY]) assert.ok(!everything.includes(key), 'no key material in the log');
  });
});

describe('API keys and quotas without Redis', () => {
  let dir: string;
  let fleet: Fleet;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-auth-local-'));
    const path = join(dir, 'keys.json');
    writeFileSync(path, JSON.stringify({ tenants: { rated: { requestsPerSecond: 0.5, burst: 2 } }, keys: [{ key: RATED_KEY, tenant: 'rated' }] }));
    fleet = await startFleet([{ model: MODEL, knobs: { ttftMs: 0, itlMs: 0 } }], ['--auth-api-keys-file', path]);
  });
  after(async () => {
    await fleet.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates, and enforces the full limits on this replica alone', async () => {
    assert.equal((await chat(fleet.base, undefined)).status, 401);
    const answers = [await chat(fleet.base, RATED_KEY), await chat(fleet.base, RATED_KEY), await chat(fleet.base, RATED_KEY)];
    assert.deepEqual(
      answers.map((r) => [r.status, r.headers['x-ratelimit-limit-requests'], r.headers['x-ratelimit-remaining-requests']]),
      [[200, '2', '1'], [200, '2', '0'], [429, '2', '0']],
    );
    assert.equal(errorOf(answers[2]!).code, 'SWITCHYARD_QUOTA_EXCEEDED');
  });
});

describe('API keys at start-up', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-auth-start-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to start with client Authorization forwarding on, or with a bad keys file (exit 2, a clear message)', async () => {
    const good = join(dir, 'good.yaml');
    writeFileSync(good, keysFile(FREE_KEY));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, `tenants: {}\nkeys:\n  - {key: ${FREE_KEY}, tenant: nobody}\n`);
    const common = ['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', 'http://127.0.0.1:9'];
    await assert.rejects(
      startRouterProcess([...common, '--auth-api-keys-file', good, '--upstream-forward-client-authorization', 'true']),
      /router exited early with 2: switchyard: invalid configuration: auth\.apiKeysFile: API-key authentication consumes the client's Authorization header; it cannot also be forwarded/,
    );
    await assert.rejects(
      startRouterProcess([...common, '--auth-api-keys-file', bad]),
      (err: Error) => err.message.includes(`exited early with 2: switchyard: auth.apiKeysFile ${bad}: keys[0].tenant: names no tenant listed under tenants`) && !err.message.includes(FREE_KEY),
    );
  });
});

/** Keys matching `pattern` in `redis`, sorted (read with a connection of its own). */
async function fetchRedisKeys(redis: RedisServer, pattern: string): Promise<string[]> {
  const client = new Redis({ port: redis.port, host: '127.0.0.1', lazyConnect: true });
  try {
    await client.connect();
    return (await client.keys(pattern)).sort();
  } finally {
    client.disconnect();
  }
}

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { SwitchyardError, errorBody, errorHeaders } from '../errors/errors.ts';
import type { QuotaOutcome, TenantLimits } from '../state/quota.ts';
import { parseApiKeys } from './api-keys.ts';
import { TenantGate, bodyPending, formatDuration } from './tenant-gate.ts';

const keys = parseApiKeys(`
tenants:
  open: {}
  rated: { requestsPerSecond: 5, burst: 10 }
  busy: { maxConcurrent: 2 }
keys:
  - { key: key-open, tenant: open }
  - { key: key-rated, tenant: rated }
  - { key: key-busy, tenant: busy }
`);

/** A gate over `keys` whose quota answers `outcome`, recording calls and reports. */
function gate(outcome: QuotaOutcome) {
  const calls: [string, TenantLimits][] = [];
  const reports: string[] = [];
  const tenants = new TenantGate({
    keys: { keys },
    quotas: {
      acquire: (tenant, limits) => {
        calls.push([tenant, limits]);
        return Promise.resolve(outcome);
      },
    },
    observer: { authFailed: (reason) => void reports.push(`auth:${reason}`), quotaRejected: (tenant, limit) => void reports.push(`quota:${tenant}:${limit}`) },
  });
  return { tenants, calls, reports };
}

const ADMIT: QuotaOutcome = { admitted: true, decidedBy: 'shared', rate: { limit: 10, remaining: 7, resetMs: 600 }, release: () => {} };

async function refusal(promise: Promise<unknown>): Promise<SwitchyardError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    return err;
  }
  assert.fail('admitted');
}

describe('TenantGate', () => {
  it('answers a missing key 401 with WWW-Authenticate, and a wrong one 401 with error="invalid_token"', async () => {
    const { tenants, calls, reports } = gate(ADMIT);
    const missing = await refusal(tenants.admit(undefined));
    assert.equal(missing.status, 401);
    assert.equal(missing.code, 'SWITCHYARD_UNAUTHORIZED');
    assert.equal(errorHeaders(missing)['www-authenticate'], 'Bearer realm="switchyard"');
    const invalid = await refusal(tenants.admit('Bearer key-wrong'));
    assert.equal(invalid.code, 'SWITCHYARD_UNAUTHORIZED');
    assert.equal(errorHeaders(invalid)['www-authenticate'], 'Bearer realm="switchyard", error="invalid_token"');
    assert.deepEqual(calls, [], 'no quota is asked for an unknown caller');
    assert.deepEqual(reports, ['auth:missing', 'auth:invalid']);
  });

  it('asks no quota for a tenant without limits', async () => {
    const { tenants, calls } = gate(ADMIT);
    const access = await tenants.admit('Bearer key-open');
    assert.equal(access.tenant, 'open');
    assert.deepEqual(access.headers, []);
    assert.deepEqual(calls, []);
  });

  it("admits within the quota and gives OpenAI's rate headers", async () => {
    const { tenants, calls } = gate(ADMIT);
    const access = await tenants.admit('Bearer key-rated');
    assert.deepEqual(calls, [['rated', { requestsPerSecond: 5, burst: 10 }]]);
    assert.deepEqual(access.headers, ['x-ratelimit-limit-requests', '10', 'x-ratelimit-remaining-requests', '7', 'x-ratelimit-reset-requests', '600ms']);
  });

  it('refuses over the rate quota with 429, Retry-After in whole seconds and the rate headers', async () => {
    const { tenants, reports } = gate({ admitted: false, decidedBy: 'shared', limit: 'rate', retryAfterMs: 150, rate: { limit: 10, remaining: 0, resetMs: 1_850 } });
    const error = await refusal(tenants.admit('Bearer key-rated'));
    assert.equal(error.status, 429);
    assert.deepEqual(JSON.parse(errorBody(error)), {
      error: { message: 'This API key is over its request rate quota; retry after the Retry-After delay.', type: 'rate_limit_exceeded', param: null, code: 'SWITCHYARD_QUOTA_EXCEEDED' },
    });
    assert.deepEqual(errorHeaders(error), {
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1.85s',
      'retry-after': '1',
    });
    assert.deepEqual(reports, ['quota:rated:rate']);
  });

  it('refuses over the concurrency quota with 429 and Retry-After: 1, without rate headers', async () => {
    const { tenants, reports } = gate({ admitted: false, decidedBy: 'degraded', limit: 'concurrency', retryAfterMs: 1_000, rate: undefined });
    const error = await refusal(tenants.admit('Bearer key-busy'));
    assert.equal(error.code, 'SWITCHYARD_QUOTA_EXCEEDED');
    assert.deepEqual(errorHeaders(error), { 'retry-after': '1' });
    assert.deepEqual(reports, ['quota:busy:concurrency']);
  });
});

describe('formatDuration', () => {
  it("writes durations as OpenAI's rate headers do", () => {
    assert.deepEqual(
      [0, 0.2, 120, 999.5, 1_000, 1_500, 59_999, 60_000, 90_500, 3_600_000].map(formatDuration),
      ['0ms', '1ms', '120ms', '1s', '1s', '1.5s', '59.999s', '1m0s', '1m30.5s', '60m0s'],
    );
  });
});

describe('bodyPending', () => {
  const request = (complete: boolean, headers: Record<string, string>) => ({ complete, headers }) as unknown as IncomingMessage;

  it('keeps the connection of a refused request without a body, and closes one whose body may still come', () => {
    assert.equal(bodyPending(request(false, {})), false, 'GET /v1/models');
    assert.equal(bodyPending(request(false, { 'content-length': '0' })), false);
    assert.equal(bodyPending(request(false, { 'content-length': '12' })), true);
    assert.equal(bodyPending(request(false, { 'transfer-encoding': 'chunked' })), true);
    assert.equal(bodyPending(request(true, { 'content-length': '12' })), false, 'already read');
  });
});

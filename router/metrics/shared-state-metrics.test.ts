import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { SharedStateMetrics } from './shared-state-metrics.ts';

const REDIS_ONLY = ['switchyard_shared_state_up', 'switchyard_fleet_replicas', 'switchyard_fleet_load_age_seconds'];

describe('SharedStateMetrics', () => {
  it('exports no Redis-only series without Redis (an alert on them must never fire for a router alone on purpose)', async () => {
    const registry = new Registry();
    new SharedStateMetrics(registry, undefined);
    const text = await registry.metrics();
    for (const name of REDIS_ONLY) assert.ok(!text.includes(name), `${name} is exported without Redis`);
    assert.ok(text.includes('switchyard_session_moves_total'), 'the counters are there either way');
  });

  it('exports up, replicas and age with Redis', async () => {
    const registry = new Registry();
    let status: 'up' | 'degraded' = 'up';
    new SharedStateMetrics(registry, { status: () => status, fleetReplicas: () => 3, fleetLoadAgeSeconds: () => 0.05 });
    assert.match(await registry.metrics(), /^switchyard_shared_state_up 1$/m);
    status = 'degraded';
    const text = await registry.metrics();
    assert.match(text, /^switchyard_shared_state_up 0$/m);
    assert.match(text, /^switchyard_fleet_replicas 3$/m);
    assert.match(text, /^switchyard_fleet_load_age_seconds 0.05$/m);
  });
});

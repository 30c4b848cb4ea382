import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { environmentWarnings, isServiceLink } from './environment.ts';
import { loadConfig } from './load.ts';

describe('environment: unknown SWITCHYARD_* variables', () => {
  it('warns once per variable that sets nothing, naming the nearest one', () => {
    assert.deepEqual(environmentWarnings({ SWITCHYARD_ROUTING_POLCY: 'session', SWITCHYARD_AUTH_API_KEY_FILE: '/k', SWITCHYARD_LISTEN: '0.0.0.0:1', HOME: '/root' }), [
      'SWITCHYARD_AUTH_API_KEY_FILE is not a switchyard setting and is ignored; did you mean SWITCHYARD_AUTH_API_KEYS_FILE?',
      'SWITCHYARD_ROUTING_POLCY is not a switchyard setting and is ignored; did you mean SWITCHYARD_ROUTING_POLICY?',
    ]);
  });

  it('says that a map can only be set in the file', () => {
    assert.deepEqual(environmentWarnings({ SWITCHYARD_LOAD_CAPACITY: '{}' }), ['SWITCHYARD_LOAD_CAPACITY is ignored: load.capacity can only be set in the config file']);
  });

  it('passes over the service-link variables the kubelet injects in a pod', () => {
    // What a pod in a namespace with the chart's Services named switchyard and switchyard-admin sees.
    const pod = {
      SWITCHYARD_PORT: 'tcp://10.96.0.12:8080',
      SWITCHYARD_PORT_8080_TCP: 'tcp://10.96.0.12:8080',
      SWITCHYARD_PORT_8080_TCP_ADDR: '10.96.0.12',
      SWITCHYARD_PORT_8080_TCP_PORT: '8080',
      SWITCHYARD_PORT_8080_TCP_PROTO: 'tcp',
      SWITCHYARD_SERVICE_HOST: '10.96.0.12',
      SWITCHYARD_SERVICE_PORT: '8080',
      SWITCHYARD_SERVICE_PORT_HTTP: '8080',
      SWITCHYARD_ADMIN_PORT: 'tcp://10.96.0.13:9090',
      SWITCHYARD_ADMIN_PORT_9090_TCP_ADDR: '10.96.0.13',
      SWITCHYARD_ADMIN_SERVICE_HOST: '10.96.0.13',
      SWITCHYARD_ADMIN_SERVICE_PORT_ADMIN: '9090',
      SWITCHYARD_CONFIG: '/etc/switchyard/config.yaml',
      SWITCHYARD_LOG_LEVEL: 'info',
    };
    assert.deepEqual(environmentWarnings(pod), []);
    assert.ok(!isServiceLink('SWITCHYARD_ROUTING_POLCY'));
  });

  it('hands the warnings to the caller with the config (serve logs them once)', () => {
    const result = loadConfig([], { SWITCHYARD_SCRAPE_INTERVAL_MSS: '500', SWITCHYARD_SERVICE_HOST: '10.0.0.1' });
    assert.equal(result.kind, 'config');
    assert.deepEqual(result.kind === 'config' && result.warnings, ['SWITCHYARD_SCRAPE_INTERVAL_MSS is not a switchyard setting and is ignored; did you mean SWITCHYARD_SCRAPE_INTERVAL_MS?']);
  });
});

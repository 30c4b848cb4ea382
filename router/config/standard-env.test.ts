/**
 * The standard OpenTelemetry variables as aliases of `tracing.*`: what each
 * sets, the stated precedence (flags > SWITCHYARD_* > OTEL_* > file), and
 * how `check-config` names the variable a value came from.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { effectiveConfigLines } from './effective.ts';
import { ConfigError, loadConfig } from './load.ts';
import type { Config } from './schema.ts';

function load(argv: string[], env: Record<string, string>) {
  const loaded = loadConfig(argv, env);
  if (loaded.kind !== 'config') throw new Error('unexpected help');
  return loaded;
}
const tracing = (argv: string[], env: Record<string, string>): Config['tracing'] => load(argv, env).config.tracing;

describe('standard OpenTelemetry variables', () => {
  it('set the tracing keys they alias', () => {
    const config = tracing([], {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'router-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '50',
      OTEL_BSP_SCHEDULE_DELAY: '250',
      OTEL_EXPORTER_OTLP_TIMEOUT: '3000',
    });
    assert.deepEqual(
      { ...config },
      {
        enabled: true,
        endpoint: 'http://collector:4318',
        protocol: 'http/json',
        serviceName: 'router-eu',
        sampler: 'parentbased_traceidratio',
        samplerArg: 0.25,
        maxQueueSize: 100,
        maxExportBatchSize: 50,
        scheduleDelayMs: 250,
        exportTimeoutMs: 3000,
      },
    );
  });

  it('leave tracing off by default, and OTEL_SDK_DISABLED turns it off whatever the exporter says', () => {
    assert.equal(tracing([], {}).enabled, false);
    assert.equal(tracing([], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).enabled, false, 'an endpoint alone turns nothing on');
    assert.equal(tracing([], { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).enabled, false);
    assert.equal(tracing([], { OTEL_TRACES_EXPORTER: 'none' }).enabled, false);
  });

  it('rank below SWITCHYARD_* and flags and above the file; the signal-specific variable wins over the general one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-otel-env-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'tracing:\n  serviceName: from-file\n  protocol: grpc\n');
    assert.equal(tracing(['--config', file], { OTEL_SERVICE_NAME: 'from-otel' }).serviceName, 'from-otel');
    assert.equal(tracing(['--config', file], { OTEL_SERVICE_NAME: 'from-otel', SWITCHYARD_TRACING_SERVICE_NAME: 'from-switchyard' }).serviceName, 'from-switchyard');
    assert.equal(tracing(['--config', file, '--tracing-service-name', 'from-flag'], { SWITCHYARD_TRACING_SERVICE_NAME: 'from-switchyard' }).serviceName, 'from-flag');
    assert.equal(tracing([], { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }).protocol, 'http/json');
    assert.equal(tracing([], { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' }).tracesEndpoint, 'http://c:4318/custom');
  });

  it('refuse unusable values naming the variable, and count an empty one as unset', () => {
    assert.throws(() => load([], { OTEL_TRACES_EXPORTER: 'zipkin' }), (err: unknown) => err instanceof ConfigError && /OTEL_TRACES_EXPORTER: switchyard exports traces over OTLP only/.test(err.message));
    assert.throws(() => load([], { OTEL_TRACES_SAMPLER_ARG: 'half' }), (err: unknown) => err instanceof ConfigError && /OTEL_TRACES_SAMPLER_ARG: expected a number/.test(err.message));
    assert.throws(() => load([], { OTEL_TRACES_SAMPLER: 'xray' }), (err: unknown) => err instanceof ConfigError && /tracing\.sampler/.test(err.message));
    assert.equal(tracing([], { OTEL_SERVICE_NAME: '' }).serviceName, 'switchyard');
  });

  it('are named as the source by check-config', () => {
    const loaded = load([], { OTEL_SERVICE_NAME: 'router-eu', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', SWITCHYARD_TRACING_SAMPLER_ARG: '0.5', OTEL_TRACES_SAMPLER_ARG: '0.1' });
    const lines = effectiveConfigLines(loaded.config, loaded.layers);
    assert.ok(lines.includes('tracing.serviceName = "router-eu"  # env OTEL_SERVICE_NAME'), lines.join('\n'));
    assert.ok(lines.includes('tracing.protocol = "http/json"  # env OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'));
    assert.ok(lines.includes('tracing.samplerArg = 0.5  # env SWITCHYARD_TRACING_SAMPLER_ARG'));
    assert.ok(lines.includes('tracing.enabled = false  # default'));
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './load.ts';
import { helpText, OPTIONS } from './options.ts';

function config(argv: string[], env: Record<string, string> = {}) {
  const result = loadConfig(argv, env);
  assert.equal(result.kind, 'config');
  return result.kind === 'config' ? result.config : assert.fail();
}

function tempFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'switchyard-config-')), name);
  writeFileSync(file, text);
  return file;
}

describe('configuration', () => {
  it('has documented defaults with units', () => {
    const c = config([]);
    assert.equal(c.timeouts.connectMs, 5_000);
    assert.equal(c.timeouts.streamFirstByteMs, 120_000);
    assert.equal(c.timeouts.responseMs, 600_000);
    assert.equal(c.server.maxBodyBytes, 32 * 1024 * 1024);
    assert.equal(c.lifecycle.preStopDelayMs, 10_000);
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.timeouts));
  });

  it('applies precedence flags > env > file > defaults', () => {
    const file = tempFile('c.yaml', 'listen: 10.0.0.1:1\nadminListen: 10.0.0.1:2\ntimeouts:\n  connectMs: 111\n  responseMs: 222\n');
    const c = config(['--config', file, '--listen', '127.0.0.1:3'], { SWITCHYARD_LISTEN: '127.0.0.1:4', SWITCHYARD_TIMEOUTS_CONNECT_MS: '333' });
    assert.equal(c.listen, '127.0.0.1:3');
    assert.equal(c.adminListen, '10.0.0.1:2');
    assert.equal(c.timeouts.connectMs, 333);
    assert.equal(c.timeouts.responseMs, 222);
    assert.equal(c.timeouts.streamChunkGapMs, 120_000);
  });

  it('reads JSON config files and the file named by SWITCHYARD_CONFIG', () => {
    const file = tempFile('c.json', JSON.stringify({ backends: ['http://127.0.0.1:8000'], upstream: { retry: false } }));
    const c = config([], { SWITCHYARD_CONFIG: file });
    assert.deepEqual(c.backends, ['http://127.0.0.1:8000']);
    assert.equal(c.upstream.retry, false);
  });

  it('takes repeated --backend flags and comma-separated SWITCHYARD_BACKEND', () => {
    assert.deepEqual(config(['--backend', 'http://a:1', '--backend=http://b:2']).backends, ['http://a:1', 'http://b:2']);
    assert.deepEqual(config([], { SWITCHYARD_BACKEND: 'http://a:1, http://b:2' }).backends, ['http://a:1', 'http://b:2']);
  });

  it('refuses a backend URL ending in /v1 with the fix; keeps a gateway prefix', () => {
    for (const url of ['http://10.0.0.5:8000/v1', 'http://10.0.0.5:8000/v1/', 'http://gw/engine-a/v1']) {
      assert.throws(
        () => loadConfig(['--backend', url], {}),
        (err: unknown) => err instanceof ConfigError && /backends\.0/.test(err.message) && /without \/v1 \(e\.g\. http:\/\/10\.0\.0\.5:8000\)/.test(err.message),
        url,
      );
    }
    assert.deepEqual(config(['--backend', 'http://gw/engine-a', '--backend', 'http://10.0.0.5:8000/v1beta']).backends, ['http://gw/engine-a', 'http://10.0.0.5:8000/v1beta']);
  });

  it('rejects bad values with a message naming the field', () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--timeouts-connect-ms', '0'], {}, /timeouts\.connectMs/],
      [['--listen', 'nonsense'], {}, /listen/],
      [['--backend', 'ftp://x'], {}, /backends\.0/],
      [[], { SWITCHYARD_SERVER_MAX_BODY_BYTES: 'lots' }, /SWITCHYARD_SERVER_MAX_BODY_BYTES/],
      [['--no-such-flag', '1'], {}, /--no-such-flag/],
      [['--log-level', 'loud'], {}, /logLevel/],
    ];
    for (const [argv, env, pattern] of cases) assert.throws(() => loadConfig(argv, env), (err: unknown) => err instanceof ConfigError && pattern.test(err.message));
  });

  it('reads map options from the config file only', () => {
    const file = tempFile('c.yaml', 'routing:\n  modelPolicies:\n    llama: session\nload:\n  capacity:\n    "http://127.0.0.1:8000": 64\n');
    const c = config(['--config', file]);
    assert.deepEqual(c.routing.modelPolicies, { llama: 'session' });
    assert.deepEqual(c.load.capacity, { 'http://127.0.0.1:8000': 64 });
    assert.throws(() => loadConfig(['--routing-model-policies', 'x'], {}), /unknown flag/);
    const bad = tempFile('c.yaml', 'routing:\n  modelPolicies:\n    llama: fastest\n');
    assert.throws(() => loadConfig(['--config', bad], {}), /routing\.modelPolicies\.llama/);
  });

  it('rejects unknown keys in the config file', () => {
    const file = tempFile('c.yaml', 'listen: 127.0.0.1:1\nlisten_port: 9\n');
    assert.throws(() => loadConfig(['--config', file], {}), /listen_port|Unrecognized/);
  });

  it('lists every option with its default and env var in --help', () => {
    assert.deepEqual(loadConfig(['--help'], {}), { kind: 'help' });
    const help = helpText();
    for (const option of OPTIONS) {
      if (option.fileOnly) {
        assert.ok(help.includes(option.path.join('.')), option.path.join('.'));
        continue;
      }
      assert.ok(help.includes(`--${option.flag}`), option.flag);
      assert.ok(help.includes(option.env), option.env);
    }
    assert.match(help, /--backend VALUE \.\.\./);
    assert.match(help, /Default: 5000\./);
  });
});

describe('configuration errors never print secrets', () => {
  const SECRET = 'sk-live-4f9a8b7c6d5e';

  function messageOf(argv: string[], env: Record<string, string> = {}): string {
    try {
      loadConfig(argv, env);
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.message;
    }
    return assert.fail('expected a ConfigError');
  }

  it('reports a YAML syntax error by file, line, column and code, without the source line', () => {
    const file = tempFile('bad.yaml', `upstream:\n  apiKey: ${SECRET}\n bad: [\n`);
    const message = messageOf(['--config', file]);
    assert.equal(message, `config file ${file}, line 3, column 1: not valid YAML: bad indentation (BAD_INDENT)`);
  });

  it('never quotes the source for errors whose parser message would', () => {
    const cases = [
      `upstream:\n  apiKey: "${SECRET}\n`, // unclosed quote
      `upstream:\n  apiKey: "${SECRET}\\q"\n`, // escape sequence
      `upstream:\n  apiKey: !${SECRET} x\n`, // unknown tag (a warning in the parser)
      `upstream:\n  apiKey: *${SECRET}\n`, // alias without an anchor
      `upstream:\n  apiKey: ${SECRET}\n  apiKey: ${SECRET}\n`, // duplicate key
    ];
    for (const text of cases) {
      const message = messageOf(['--config', tempFile('bad.yaml', text)]);
      assert.match(message, /not valid YAML: /);
      assert.ok(!message.includes(SECRET) && !message.includes('sk-live'), message);
    }
  });

  it('reports schema errors on a secret field without its value', () => {
    const message = messageOf([], { SWITCHYARD_UPSTREAM_API_KEY: `${SECRET}\nsecond-line` });
    assert.equal(message, 'invalid configuration: upstream.apiKey: must be printable ASCII on one line');
  });
});

describe('configuration: discovery trust settings', () => {
  it('reads allow-lists and engine keys per source, and slice managers', () => {
    const file = tempFile(
      'c.yaml',
      [
        'discovery:',
        '  mode: pods',
        '  labelSelector: app=vllm',
        '  allowedModels: [llama-prod]',
        '  static:',
        '    allowedModels: [static-*]',
        '  sources:',
        '    team-b:',
        '      kind: endpointslices',
        '      namespace: b',
        '      service: vllm',
        '      allowedModels: [team-b-*]',
        '      apiKeyFile: /keys/team-b',
        '      sliceManagers: [endpointslice-controller.k8s.io, endpointslicemirroring-controller.k8s.io]',
      ].join('\n'),
    );
    const c = config(['--config', file, '--discovery-static-api-key', 'static-key']);
    assert.deepEqual(c.discovery.allowedModels, ['llama-prod']);
    assert.deepEqual(c.discovery.static, { allowedModels: ['static-*'], apiKey: 'static-key' });
    assert.deepEqual(c.discovery.sliceManagers, ['endpointslice-controller.k8s.io'], 'default: the EndpointSlice controller only');
    assert.equal(c.discovery.sources['team-b']?.apiKeyFile, '/keys/team-b');
    assert.deepEqual(c.discovery.sources['team-b']?.sliceManagers, ['endpointslice-controller.k8s.io', 'endpointslicemirroring-controller.k8s.io']);
    assert.deepEqual(config([], { SWITCHYARD_DISCOVERY_ALLOWED_MODELS: 'a,b-*' }).discovery.allowedModels, ['a', 'b-*']);
  });

  it('an inferencepool source needs its pool; pool and models belong to inferencepool sources only', () => {
    const c = config(['--discovery-mode', 'inferencepool', '--discovery-pool', 'vllm-llama']);
    assert.deepEqual([c.discovery.mode, c.discovery.pool, c.discovery.endpointPickerService], ['inferencepool', 'vllm-llama', 'switchyard']);
    assert.throws(() => loadConfig(['--discovery-mode', 'inferencepool'], {}), /discovery\.pool: required when discovering an inferencepool/);
    const misplaced = tempFile('c.yaml', 'discovery:\n  sources:\n    b:\n      kind: pods\n      labelSelector: app=vllm\n      models: [m]\n');
    assert.throws(() => loadConfig(['--config', misplaced], {}), /discovery\.sources\.b\.models: only for an inferencepool source/);
  });

  it('rejects a * anywhere but at the end, an empty allow-list, and the reserved source names', () => {
    assert.throws(() => loadConfig(['--discovery-allowed-models', 'llama-*-prod'], {}), /discovery\.allowedModels/);
    const empty = tempFile('c.yaml', 'discovery:\n  static:\n    allowedModels: []\n');
    assert.throws(() => loadConfig(['--config', empty], {}), /discovery\.static\.allowedModels/);
    for (const name of ['default', 'static']) {
      const file = tempFile('c.yaml', `discovery:\n  sources:\n    ${name}:\n      kind: pods\n      labelSelector: app=vllm\n`);
      assert.throws(() => loadConfig(['--config', file], {}), /reserved source names/);
    }
  });
});

/**
 * Every level of the configuration is strict. A misspelt key below the top
 * level used to be dropped in silence and its setting ran on its default:
 * `auth: {apiKeyFile: ...}` started the router with no authentication,
 * `redis.tls.enable` left Redis in plaintext, `discovery.allowedModel`
 * dropped the model allow-list. Each must be refused with its dotted path and
 * the key that was meant.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './load.ts';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-strict-'));
let files = 0;

/** The one-line error that loading `yaml` as the config file gives. */
function errorFor(yaml: string, argv: string[] = []): string {
  const file = join(dir, `c${files++}.yaml`);
  writeFileSync(file, yaml);
  try {
    loadConfig(['--config', file, ...argv], {});
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.ok(!err.message.includes('\n'), `one line: ${err.message}`);
    return err.message;
  }
  return assert.fail(`accepted:\n${yaml}`);
}

describe('configuration: unknown keys at every level', () => {
  const typos: [yaml: string, message: string][] = [
    ['auth: {apiKeyFile: keys.yaml}', 'auth.apiKeyFile: unknown key; did you mean auth.apiKeysFile?'],
    ['redis: {url: "redis://r:6379", tls: {enable: true}}', 'redis.tls.enable: unknown key; did you mean redis.tls.enabled?'],
    ['discovery: {allowedModel: [llama]}', 'discovery.allowedModel: unknown key; did you mean discovery.allowedModels?'],
    ['routing: {polcy: round-robin}', 'routing.polcy: unknown key; did you mean routing.policy?'],
    ['admission: {queueLenght: 5}', 'admission.queueLenght: unknown key; did you mean admission.queueLength?'],
    ['server: {maxBodyByte: 4096}', 'server.maxBodyByte: unknown key; did you mean server.maxBodyBytes?'],
    ['discovery: {labelSelctor: app=vllm}', 'discovery.labelSelctor: unknown key; did you mean discovery.labelSelector?'],
    ['scrape: {intervalMS: 500}', 'scrape.intervalMS: unknown key; did you mean scrape.intervalMs?'],
  ];
  for (const [yaml, message] of typos) {
    it(`refuses ${yaml} naming the key that was meant`, () => {
      assert.equal(errorFor(yaml), `invalid configuration: ${message}`);
    });
  }

  it('names the full path inside maps, lists of sections and deep sections', () => {
    assert.match(errorFor('routing: {profiles: {chat: {wieghts: {load: 1}}}}'), /routing\.profiles\.chat\.wieghts: unknown key; did you mean routing\.profiles\.chat\.weights\?/);
    assert.match(errorFor('discovery: {sources: {b: {kind: pods, labelSelector: a=b, alowedModels: [x]}}}'), /discovery\.sources\.b\.alowedModels: unknown key; did you mean discovery\.sources\.b\.allowedModels\?/);
    assert.match(errorFor('load: {safeStart: {initalLimit: 2}}'), /load\.safeStart\.initalLimit: unknown key; did you mean load\.safeStart\.initialLimit\?/);
    assert.match(errorFor('discovery: {static: {apiKeyFiles: /k}}'), /discovery\.static\.apiKeyFiles: unknown key; did you mean discovery\.static\.apiKeyFile\?/);
  });

  it('names the option in another section when the key is misplaced', () => {
    assert.equal(errorFor('policy: round-robin'), 'invalid configuration: policy: unknown key; did you mean routing.policy?');
    assert.equal(errorFor('apiKeysFile: keys.yaml'), 'invalid configuration: apiKeysFile: unknown key; did you mean auth.apiKeysFile?');
  });

  it('lists the valid keys when no key is near, and reports every unknown key on one line', () => {
    assert.equal(errorFor('quotas: {zzz: 1}'), 'invalid configuration: quotas.zzz: unknown key (quotas takes checkTimeoutMs)');
    const message = errorFor('routing: {polcy: session}\nscrape: {intervalMS: 500}');
    assert.match(message, /routing\.polcy: unknown key; did you mean routing\.policy\?; scrape\.intervalMS: unknown key; did you mean scrape\.intervalMs\?/);
  });

  it('accepts every key spelt right, and settings in sections that had only files before (routing.prefix)', () => {
    const c = loadConfig(['--routing-prefix-epsilon', '0.7'], {});
    assert.equal(c.kind === 'config' && c.config.routing.prefix.epsilon, 0.7);
  });
});

describe('configuration: unknown flags', () => {
  it('suggests the closest flag', () => {
    assert.throws(() => loadConfig(['--timeouts-conect-ms', '5'], {}), { message: 'unknown flag --timeouts-conect-ms; did you mean --timeouts-connect-ms? (see --help)' });
    assert.throws(() => loadConfig(['--auth-api-key-file', 'k'], {}), { message: 'unknown flag --auth-api-key-file; did you mean --auth-api-keys-file? (see --help)' });
    assert.throws(() => loadConfig(['--zzzzzzzzzzzz', 'k'], {}), { message: 'unknown flag --zzzzzzzzzzzz (see --help)' });
  });
});

describe('configuration errors show non-secret values, never secrets', () => {
  it('shows the value a check refused', () => {
    assert.equal(errorFor('listen: "8080"'), 'invalid configuration: listen: must be HOST:PORT, e.g. 0.0.0.0:8080 (got "8080")');
    assert.match(errorFor('scrape: {intervalMs: 50}'), /scrape\.intervalMs: .* \(got 50\)$/);
  });

  it('never shows an API key, nor credentials in a URL', () => {
    const secret = 'sk-live-9z8y7x\u0001';
    const message = errorFor(`upstream: {apiKey: "${secret}"}\ndiscovery: {sources: {b: {kind: pods, labelSelector: a=b, apiKey: "${secret}"}}}`);
    assert.ok(!message.includes('sk-live'), message);
    assert.match(message, /upstream\.apiKey: must be printable ASCII on one line/);
    const redis = errorFor('redis: {url: "redis://admin:hunter2@redis:6379"}');
    assert.ok(!redis.includes('hunter2'), redis);
    assert.match(redis, /redis\.url: .*\(got "redis:\/\/\(credentials not shown\)@redis:6379"\)/);
  });
});

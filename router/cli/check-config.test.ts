/**
 * `switchyard check-config`, run as the real command: validates what `serve`
 * would load and prints the effective configuration with each value's
 * source, secrets never shown; exit 0 when valid, 2 when not.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const BIN = fileURLToPath(new URL('./bin.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'switchyard-check-config-'));
const SECRET = 'sk-live-Qm4Vt8Lr2Np6';

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function run(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, 'check-config', ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('switchyard check-config', () => {
  const keysFile = file('keys.yaml', `tenants:\n  team-a: {}\nkeys:\n  - key: ${SECRET}\n    tenant: team-a\n`);
  const engineKey = file('engine-key', `${SECRET}-engine\n`);

  it('prints the effective configuration with each source and exits 0 for a good file', () => {
    const good = file('good.yaml', `routing:\n  policy: round-robin\nauth:\n  apiKeysFile: ${keysFile}\nupstream:\n  apiKey: ${SECRET}\ndiscovery:\n  static:\n    apiKeyFile: ${engineKey}\n`);
    const result = run([good, '--timeouts-connect-ms', '3000'], { SWITCHYARD_LOG_LEVEL: 'warn', SWITCHYARD_SERVICE_HOST: '10.96.0.1' });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '', 'a service-link variable draws no warning');
    const lines = result.stdout.split('\n');
    assert.equal(lines[0], `# switchyard configuration is valid (${good})`);
    assert.ok(lines.includes(`routing.policy = "round-robin"  # file ${good}`), result.stdout);
    assert.ok(lines.includes('timeouts.connectMs = 3000  # flag --timeouts-connect-ms'), result.stdout);
    assert.ok(lines.includes('logLevel = "warn"  # env SWITCHYARD_LOG_LEVEL'), result.stdout);
    assert.ok(lines.includes('admission.queueLength = 10000  # default'), result.stdout);
    assert.ok(lines.includes(`auth.apiKeysFile = ${JSON.stringify(keysFile)}  # file ${good}`), result.stdout);
    assert.ok(lines.includes(`upstream.apiKey = (secret, not shown)  # file ${good}`), result.stdout);
    assert.ok(!result.stdout.includes(SECRET), 'no secret printed');
  });

  it('refuses a typo with its path and the key that was meant, exit 2, one line', () => {
    const bad = file('bad.yaml', `auth:\n  apiKeyFile: ${keysFile}\n`);
    const result = run([bad]);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, 'switchyard check-config: invalid configuration: auth.apiKeyFile: unknown key; did you mean auth.apiKeysFile?\n');
  });

  it('checks the files the configuration names, without printing them', () => {
    const twoLines = file('two-lines', `${SECRET}\nsecond\n`);
    const result = run(['--config', file('c.yaml', `upstream:\n  apiKeyFile: ${twoLines}\n`)]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, new RegExp(`upstream\\.apiKeyFile ${twoLines}: holds 2 lines`));
    assert.ok(!result.stderr.includes(SECRET));
    const missing = run(['--auth-api-keys-file', join(dir, 'absent.yaml')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /auth\.apiKeysFile .*absent\.yaml: cannot read it \(ENOENT\)/);
  });

  it('refuses a profile naming an unknown scorer, with the profile, the scorer and the known names', () => {
    const unknown = run([file('scorer.yaml', 'routing:\n  profiles:\n    chat:\n      scorers: [{name: latency, weight: 1}]\n')]);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'switchyard check-config: invalid configuration: routing.profiles.chat.scorers.0.name: profile chat: unknown scorer latency; known: kv-usage, load-score\n');
    const both = run([file('both.yaml', 'routing:\n  profiles:\n    chat:\n      scorers: [{name: load-score, weight: 1}]\n      weights: {load: 1, kvUsage: 0.2}\n')]);
    assert.equal(both.code, 2);
    assert.equal(both.stderr, 'switchyard check-config: invalid configuration: routing.profiles.chat.weights: give scorers or weights, not both (weights is the older form of scorers)\n');
    const walk = run([file('walk.yaml', 'routing:\n  profiles:\n    chat:\n      affinity: [session, {name: prefix, parameters: {spread: 0.5}}]\n')]);
    assert.equal(walk.code, 2);
    assert.match(walk.stderr, /routing\.profiles\.chat\.affinity\.1\.parameters: profile chat: affinity walk prefix: bad parameters \(spread: /);
  });

  it('warns about an unknown SWITCHYARD_* variable and an unknown flag suggests the closest', () => {
    const warned = run([], { SWITCHYARD_ROUTING_POLCY: 'session' });
    assert.equal(warned.code, 0);
    assert.equal(warned.stderr, 'switchyard check-config: warning: SWITCHYARD_ROUTING_POLCY is not a switchyard setting and is ignored; did you mean SWITCHYARD_ROUTING_POLICY?\n');
    const flag = run(['--routing-polcy', 'session']);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /unknown flag --routing-polcy; did you mean --routing-policy\?/);
  });
});

describe('switchyard: unknown command', () => {
  it('names the closest command and exits 2', () => {
    const result = spawnSync(process.execPath, [BIN, 'chek-config'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /unknown command "chek-config"; did you mean check-config\?/);
  });
});

describe('switchyard serve: unknown SWITCHYARD_* variables', () => {
  it('logs one warning per variable that sets nothing, none for service links, and starts', async () => {
    const env = { PATH: process.env['PATH'] ?? '', SWITCHYARD_ROUTING_POLCY: 'session', SWITCHYARD_SERVICE_HOST: '10.96.0.12', SWITCHYARD_PORT_8080_TCP_ADDR: '10.96.0.12' };
    const child = spawn(process.execPath, [BIN, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const lines: Record<string, unknown>[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        let buffered = '';
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', (chunk: string) => {
          buffered += chunk;
          const parts = buffered.split('\n');
          buffered = parts.pop() ?? '';
          for (const part of parts) {
            const line = JSON.parse(part) as Record<string, unknown>;
            lines.push(line);
            if (line['msg'] === 'switchyard listening') resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${String(code)}: ${buffered}`)));
      });
    } finally {
      child.kill('SIGKILL');
    }
    const warnings = lines.filter((line) => line['level'] === 40 && String(line['msg']).includes('SWITCHYARD_')).map((line) => line['msg']);
    assert.deepEqual(warnings, ['SWITCHYARD_ROUTING_POLCY is not a switchyard setting and is ignored; did you mean SWITCHYARD_ROUTING_POLICY?']);
  });
});

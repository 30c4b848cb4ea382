/**
 * Configuration problems must stop the router with a message that names the
 * file and the place, and never print a secret. A YAML syntax error used to
 * print the offending lines (the API key among them) to stderr, where log
 * collectors keep them, and so did one in a kubeconfig (its token beside
 * it); an API-key file with two lines was accepted and then broke every
 * request with an invalid Authorization header.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startRouterProcess } from '../kit/harness.ts';

const SECRET = 'sk-live-7Hq2Zr9Xw4Kp';
const dir = mkdtempSync(join(tmpdir(), 'switchyard-config-secrets-'));
const engine = new EngineSimulator({ model: 'm-secret' });

before(() => engine.listen());
after(() => engine.close());

/** Runs `switchyard serve`; a router that starts is stopped at once and reported as 'listening'. */
async function startOutcome(args: string[]): Promise<{ code: string; stderr: string } | 'listening'> {
  try {
    const router = await startRouterProcess(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, ...args]);
    router.child.kill('SIGKILL');
    await router.exit;
    return 'listening';
  } catch (err) {
    const match = /^router exited early with (\S+): ([\s\S]*)$/.exec((err as Error).message);
    assert.ok(match !== null, (err as Error).message);
    return { code: match[1] as string, stderr: match[2] as string };
  }
}

test('regression: a YAML syntax error in the config file printed the offending lines, API key included, to stderr', async () => {
  const file = join(dir, 'router.yaml');
  // A mis-indented line right under the key: the parser's message quotes both lines.
  writeFileSync(file, `upstream:\n  apiKey: ${SECRET}\n retry: true\nlogLevel: info\n`);
  const result = await startOutcome(['--config', file]);
  assert.notEqual(result, 'listening');
  assert.ok(typeof result === 'object');
  assert.equal(result.code, '2');
  assert.ok(!result.stderr.includes(SECRET), `stderr shows the key:\n${result.stderr}`);
  assert.match(result.stderr, new RegExp(`config file ${file}, line \\d+, column \\d+: not valid YAML`));
});

test('regression: a two-line API key file was accepted and every request then failed', async () => {
  const keyFile = join(dir, 'api-key');
  writeFileSync(keyFile, `${SECRET}\nsk-second-line-key\n`);
  const result = await startOutcome(['--upstream-api-key-file', keyFile]);
  assert.notEqual(result, 'listening', 'the router started with an unusable key');
  assert.ok(typeof result === 'object');
  assert.equal(result.code, '2');
  assert.match(result.stderr, new RegExp(`upstream\\.apiKeyFile ${keyFile}: holds 2 lines`));
  assert.ok(!result.stderr.includes(SECRET) && !result.stderr.includes('sk-second-line-key'), `stderr shows the key:\n${result.stderr}`);
});

test('regression: a YAML syntax error in the kubeconfig printed the lines around it, token included, to stderr', async () => {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, `apiVersion: v1\nusers:\n- name: router\n  user:\n    token: ${SECRET}\n   extra: [\n`);
  const result = await startOutcome(['--discovery-mode', 'pods', '--discovery-label-selector', 'app=vllm', '--kubeconfig', kubeconfig]);
  assert.notEqual(result, 'listening');
  assert.ok(typeof result === 'object');
  assert.notEqual(result.code, '0');
  assert.ok(!result.stderr.includes(SECRET), `stderr shows the token:\n${result.stderr}`);
  assert.match(result.stderr, new RegExp(`kubeconfig ${kubeconfig}: not valid YAML at line 6, column 4`));
});

/**
 * A misspelt key below the top level of the config file was dropped in
 * silence, and one of them turned authentication off: `auth: {apiKeyFile:
 * keys.yaml}` (the option is apiKeysFile) started the router with no API
 * keys at all, so a request carrying no key got 200 from the engines. A
 * router given that file must refuse to start, exit 2, name the key that was
 * meant, and never answer a request.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startRouterProcess, type RouterProcess } from '../kit/harness.ts';

const MODEL = 'm-auth-typo';
const KEY = 'sk-team-a-5Rt8Yp2Wq7';
const dir = mkdtempSync(join(tmpdir(), 'switchyard-auth-typo-'));
const keysFile = join(dir, 'keys.yaml');
const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 1 } });

before(async () => {
  writeFileSync(keysFile, `tenants:\n  team-a: {}\nkeys:\n  - key: ${KEY}\n    tenant: team-a\n`);
  await engine.listen('127.0.0.1', 0);
});
after(() => engine.close());

function configFile(name: string, authKey: string): string {
  const file = join(dir, name);
  writeFileSync(file, `listen: 127.0.0.1:0\nadminListen: 127.0.0.1:0\nbackends: [${engine.url}]\nauth:\n  ${authKey}: ${keysFile}\n`);
  return file;
}

/** Status of a key-less chat request, once the router knows the model (503 until then). */
async function keylessStatus(router: RouterProcess): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await postJson(`http://127.0.0.1:${router.traffic}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    if (response.status !== 503 || Date.now() > deadline) return response.status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('regression: auth.apiKeyFile (for auth.apiKeysFile) started the router without authentication, a key-less request got 200', async () => {
  let router: RouterProcess | undefined;
  try {
    router = await startRouterProcess(['--config', configFile('typo.yaml', 'apiKeyFile')]);
  } catch (err) {
    const match = /^router exited early with (\S+): ([\s\S]*)$/.exec((err as Error).message);
    assert.ok(match !== null, (err as Error).message);
    assert.equal(match[1], '2', 'invalid configuration exits 2');
    assert.equal(match[2], 'switchyard: invalid configuration: auth.apiKeyFile: unknown key; did you mean auth.apiKeysFile?\n');
    return;
  }
  const status = await keylessStatus(router);
  router.child.kill('SIGKILL');
  await router.exit;
  assert.fail(`the router started with auth.apiKeyFile and answered a request without a key with ${status}`);
});

test('the same file spelt right requires the key: 401 without it, 200 with it', async () => {
  const router = await startRouterProcess(['--config', configFile('good.yaml', 'apiKeysFile')]);
  try {
    const url = `http://127.0.0.1:${router.traffic}/v1/chat/completions`;
    const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
    assert.equal((await postJson(url, body)).status, 401);
    const deadline = Date.now() + 10_000;
    let status = 0;
    do {
      status = (await postJson(url, body, { authorization: `Bearer ${KEY}` })).status;
      if (status === 503) await new Promise((resolve) => setTimeout(resolve, 100));
    } while (status === 503 && Date.now() < deadline);
    assert.equal(status, 200);
  } finally {
    router.child.kill('SIGKILL');
    await router.exit;
  }
});

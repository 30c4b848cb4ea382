/**
 * An operator's first day, from outside: the real CLI and `npm start`'s demo as child processes.
 * The version, the start-up line, the warnings a misconfigured start owes, one-line errors where a
 * stack trace used to be, and a second Ctrl-C that does not wait for the drain.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { spawnSwitchyard, startRouter } from '../kit/router-process.ts';

const BIN = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));
const DEMO = fileURLToPath(new URL('../../router/cli/demo.ts', import.meta.url));
const { version: VERSION } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
/** No SWITCHYARD_* variable of the test runner's, no Kubernetes service variables. */
const CLEAN_ENV = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };

/** Runs the CLI to its end. */
function run(args: readonly string[], env: NodeJS.ProcessEnv = CLEAN_ENV) {
  const result = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('first run: version, start-up line, one-line failures', () => {
  it('--version prints the package version, as a command and as a serve flag', () => {
    for (const args of [['--version'], ['serve', '--version']]) {
      const { code, stdout } = run(args);
      assert.equal(code, 0, args.join(' '));
      assert.equal(stdout.trim(), `switchyard ${VERSION}`);
    }
  });

  it('the start-up line names the version, the discovery, the policy and the endpoint count; zero engines warns', async () => {
    const bare = await startRouter([]);
    try {
      const listening = bare.logs.find((l) => l['msg'] === 'switchyard listening');
      assert.deepEqual(
        { version: listening?.['version'], discovery: listening?.['discovery'], staticBackends: listening?.['staticBackends'], policy: listening?.['policy'], endpoints: listening?.['endpoints'] },
        { version: VERSION, discovery: 'static', staticBackends: 0, policy: 'auto', endpoints: 0 },
      );
      assert.ok(bare.logs.some((l) => l['level'] === 40 && String(l['msg']).startsWith('no engines configured')), 'zero engines warned about');
      assert.match(await (await fetch(`${bare.admin}/metrics`)).text(), new RegExp(`switchyard_build_info\\{version="${VERSION.replaceAll('.', '\\.')}",node_version="v\\d+\\.\\d+\\.\\d+"\\} 1`));
    } finally {
      await bare.stop();
    }
    const engine = new EngineSimulator({ model: 'm' });
    await engine.listen();
    const served = await startRouter(['--backend', engine.url, '--routing-policy', 'least-load']);
    try {
      const listening = served.logs.find((l) => l['msg'] === 'switchyard listening');
      assert.equal(listening?.['policy'], 'least-load');
      assert.equal(listening?.['staticBackends'], 1);
      assert.ok(!served.logs.some((l) => String(l['msg']).startsWith('no engines configured')));
    } finally {
      await served.stop();
      await engine.close();
    }
  });

  it('pods mode outside a cluster: one line on stderr that says what is missing, exit 1', () => {
    const { code, stderr } = run(['serve', '--discovery-mode', 'pods', '--discovery-label-selector', 'app=vllm', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
    assert.equal(code, 1);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /^switchyard: cannot start: no Kubernetes API configured: not in a cluster \(KUBERNETES_SERVICE_HOST unset\)/);
  });

  it('a backend URL ending in /v1 is refused before start, with the fix', () => {
    const { code, stderr } = run(['serve', '--backend', 'http://127.0.0.1:8000/v1']);
    assert.equal(code, 2);
    assert.match(stderr, /backends\.0: must be the engine's address without \/v1 \(e\.g\. http:\/\/10\.0\.0\.5:8000\)/);
  });

  it('Ctrl-C drains and says a second one exits now; the second exits at once with 130', async () => {
    const router = await spawnSwitchyard(['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '60000'], { env: CLEAN_ENV });
    router.child.kill('SIGINT');
    const deadline = Date.now() + 5_000;
    while (!router.logs.some((l) => String(l['msg']).includes('a second Ctrl-C (or signal) exits now')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(router.logs.some((l) => String(l['msg']).includes('a second Ctrl-C (or signal) exits now')), 'the hint is logged');
    const sent = Date.now();
    router.child.kill('SIGINT');
    assert.equal(await router.exit, 130);
    assert.ok(Date.now() - sent < 5_000, 'did not wait for the 60 s pre-stop delay');
  });
});

describe('npm start (the demo)', () => {
  it('passes serve flags through: --listen moves the traffic port, and the printed curl target answers', async () => {
    const demo = await spawnSwitchyard(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0'], { script: DEMO, env: CLEAN_ENV, marker: 'switchyard demo: router on' });
    try {
      const line = String(demo.logs.find((l) => String(l['msg']).startsWith('switchyard demo: router on'))?.['msg']);
      const base = /router on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
      assert.ok(base !== undefined && !base.endsWith(':8080'), line);
      const response = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(response.status, 200);
    } finally {
      await demo.stop();
    }
  });

  it('a taken port: one line that names it, exit 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    assert.ok(address !== null && typeof address === 'object');
    try {
      const result = spawnSync(process.execPath, [DEMO, '--listen', `127.0.0.1:${address.port}`, '--admin-listen', '127.0.0.1:0'], { env: CLEAN_ENV, encoding: 'utf8', timeout: 30_000 });
      assert.equal(result.status, 1);
      const errorLines = result.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
      assert.deepEqual(errorLines, [`switchyard demo: cannot start: cannot listen on the traffic port 127.0.0.1:${address.port}: listen EADDRINUSE: address already in use 127.0.0.1:${address.port}`]);
    } finally {
      taken.close();
    }
  });
});

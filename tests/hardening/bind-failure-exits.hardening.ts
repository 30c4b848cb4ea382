/**
 * A router that cannot bind one of its ports must exit non-zero at once.
 * It used to log "the router keeps running" and stay up: without its traffic
 * port it answered /livez and /readyz with 200 while serving nothing (so
 * Kubernetes kept it Ready), and without its admin port it scraped engines
 * forever with no probe to notice.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';

const BIN = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));

/** Spawn-to-exit bound (ms): process start-up (module loading on a busy 2-core machine) plus the failed bind. */
const EXIT_WITHIN_MS = 8_000;

const engine = new EngineSimulator({ model: 'm-bind' });
let held: Server;
let heldAddress: string;

before(async () => {
  await engine.listen();
  // A port already held by someone else: the bind fails with EADDRINUSE.
  held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  const address = held.address();
  assert.ok(typeof address === 'object' && address !== null);
  heldAddress = `127.0.0.1:${address.port}`;
});

after(async () => {
  await new Promise((resolve) => held.close(resolve));
  await engine.close();
});

/** How a router process ended: its exit code and stderr, or that it was still up at the bound. */
type Outcome = { readonly code: number | null; readonly stderr: string } | 'still running';

/**
 * Runs `switchyard serve` and waits for its exit. Not startRouterProcess: that
 * hands out the child only once it listens, so a router that hangs after a
 * failed bind (the bug) could not be killed and would outlive the test.
 */
function outcome(args: string[]): Promise<Outcome> {
  const child = spawn(process.execPath, [BIN, 'serve', '--backend', engine.url, '--log-level', 'info', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => (stderr += text));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('still running');
    }, EXIT_WITHIN_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

test('regression: a router whose traffic port was taken kept running, answered its probes with 200 and served nothing', async () => {
  const result = await outcome(['--listen', heldAddress, '--admin-listen', '127.0.0.1:0']);
  assert.notEqual(result, 'still running', `the router must exit within ${EXIT_WITHIN_MS} ms`);
  assert.ok(typeof result === 'object');
  assert.ok(result.code !== null && result.code !== 0, `exit code ${String(result.code)}`);
  assert.match(result.stderr, new RegExp(`cannot listen on the traffic port ${heldAddress}: listen EADDRINUSE`));
  assert.doesNotMatch(result.stderr, /keeps running/);
});

test('regression: a router whose admin port was taken kept running and scraping with no probe to report it', async () => {
  const result = await outcome(['--listen', '127.0.0.1:0', '--admin-listen', heldAddress]);
  assert.notEqual(result, 'still running', `the router must exit within ${EXIT_WITHIN_MS} ms`);
  assert.ok(typeof result === 'object');
  assert.ok(result.code !== null && result.code !== 0, `exit code ${String(result.code)}`);
  assert.match(result.stderr, new RegExp(`cannot listen on the admin port ${heldAddress}: listen EADDRINUSE`));
});

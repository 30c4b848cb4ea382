/**
 * `switchyard status` against a real router process with pod discovery (the kit's fake API
 * server): three pods, one healthy, one whose engine refuses connections until it is ejected, one
 * declaring two unnamed ports (skipped), and one not scheduled yet (skipped, no IP). The table is
 * compared with a golden file once the figures that move with time (scrape age, ejection time
 * left) are masked; `--json` and a wrong token are checked too. status-table.test.ts renders
 * every state from a fixed document, unmasked.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { FakeKubeApi } from '../kit/kube/fake-kube-api.ts';
import { pod, podsPath, writeKubeconfig } from '../kit/kube/fixtures.ts';
import { getJson, startRouter, type RouterProcess } from '../kit/router-process.ts';

const BIN = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));
const GOLDEN = fileURLToPath(new URL('golden/status.txt', import.meta.url));
const MODEL = 'sim-model';

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

function runStatus(args: readonly string[]) {
  const result = spawnSync(process.execPath, [BIN, 'status', ...args], { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The figures that move with the clock, masked: scrape age (and whether it passed the stale mark), ejection time left. */
const masked = (text: string) =>
  text.replace(/(fresh|stale) \d+\.\d s/g, 'scraped N.N s').replace(/\(\d+ s left\)/g, '(N s left)');

describe('switchyard status', () => {
  const fake = new FakeKubeApi();
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 2 } });
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-status-'));
  const tokenFile = join(dir, 'admin-token');
  let router: RouterProcess;

  before(async () => {
    const server = await fake.listen();
    const port = await engine.listen();
    const models = { 'switchyard.io/models': MODEL };
    fake.put(podsPath('ns'), pod('engine-a', { ip: '127.0.0.1', port, annotations: models }));
    fake.put(podsPath('ns'), pod('engine-b', { ip: '127.0.0.1', port: await closedPort(), annotations: models }));
    fake.put(podsPath('ns'), pod('engine-c', { ip: '127.0.0.1', ports: [{ containerPort: 8000 }, { containerPort: 9000 }] }));
    fake.put(podsPath('ns'), pod('engine-d', { ip: '', phase: 'Pending' }));
    writeFileSync(tokenFile, 'status-token\n');
    const kubeconfig = writeKubeconfig(join(dir, 'kubeconfig'), { server, token: 'router-token', namespace: 'ns' });
    router = await startRouter(
      ['--discovery-mode', 'pods', '--discovery-label-selector', 'app=engine', '--admin-token-file', tokenFile, '--load-ejection-consecutive-failures', '2', '--load-ejection-base-ms', '600000', '--scrape-interval-ms', '200'],
      { KUBECONFIG: kubeconfig },
    );
    // Requests until engine-b's refusals eject it (each refused attempt is retried on engine-a).
    const auth = { authorization: 'Bearer status-token' };
    const ejected = async () => ((await (await fetch(`${router.admin}/debug/endpoints`, { headers: auth })).json()) as { endpoints: { id: string; health: { ejected: boolean } }[] }).endpoints.some((e) => e.id === 'ns/engine-b' && e.health.ejected);
    for (let i = 0; i < 100 && !(await ejected()); i++) {
      const response = await fetch(`${router.traffic}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }) });
      await response.arrayBuffer();
    }
    assert.ok(await ejected(), 'engine-b was ejected');
    // Both engines scraped (engine-b's scrapes fail: its metrics read as unavailable).
    await new Promise((resolve) => setTimeout(resolve, 500));
  });

  after(async () => {
    await router?.stop();
    await engine.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the fleet table: routable, ejected, and the skipped pods with their reasons (golden file)', () => {
    const { code, stdout, stderr } = runStatus(['--admin', router.admin, '--token-file', tokenFile]);
    assert.equal(code, 0, stderr);
    const actual = masked(stdout);
    if (process.env['SWITCHYARD_UPDATE_GOLDEN'] === '1') writeFileSync(GOLDEN, actual);
    assert.equal(actual, readFileSync(GOLDEN, 'utf8'));
  });

  it('--json prints the document; without the token it says what is missing, exit 1', async () => {
    const json = runStatus(['--admin', router.admin, '--token-file', tokenFile, '--json']);
    assert.equal(json.code, 0);
    const document = JSON.parse(json.stdout) as { endpoints: { id: string }[] };
    assert.deepEqual(document.endpoints.map((e) => e.id).sort(), ['ns/engine-a', 'ns/engine-b']);
    const denied = runStatus(['--admin', router.admin]);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /answered 401: the admin port needs its token \(--token-file\)/);
    assert.equal((await getJson(`${router.admin}/readyz`)).status, 200, 'probes stay open without the token');
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitForModels } from '../kit/processes.ts';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson, startRouterProcess } from '../kit/harness.ts';

const MODEL = 'm-imports';
const LOADTEST = new URL('../../loadtest/', import.meta.url).href;

/**
 * The router image ships without most of loadtest/, and the product must not
 * depend on its test tools: `switchyard serve` loads none of it (the CLI's
 * sim, bench and demo import it on demand). Lint catches a static import in a
 * router/ file; this catches any path into loadtest/ however it is reached.
 */
describe('switchyard serve', () => {
  const engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 1, itlMs: 0, outputTokens: 2 } });
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-modules-'));
  before(() => engine.listen());
  after(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads no module under loadtest/, from start-up through a routed stream', async () => {
    const log = join(dir, 'modules.txt');
    const hook = new URL('../kit/module-log-hook.ts', import.meta.url);
    hook.searchParams.set('log', log);
    const router = await startRouterProcess(['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, '--lifecycle-pre-stop-delay-ms', '0'], ['--import', hook.href]);
    try {
      const base = `http://127.0.0.1:${router.traffic}`;
      await waitForModels(base);
      const answer = await postJson(`${base}/v1/chat/completions`, { model: MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(answer.status, 200);
    } finally {
      router.child.kill('SIGKILL');
      await router.exit;
    }
    const loaded = readFileSync(log, 'utf8').split('\n');
    assert.ok(loaded.includes(new URL('../../router/compose.ts', import.meta.url).href), 'the hook saw the router load');
    assert.deepEqual(
      loaded.filter((url) => url.startsWith(LOADTEST)),
      [],
      'modules under loadtest/ that `switchyard serve` loaded',
    );
  });
});

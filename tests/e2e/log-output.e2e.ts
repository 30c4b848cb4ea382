/**
 * A router whose log readers went away (stdout and stderr piped into
 * processes that exited) keeps serving and idles. It used to spin at 100% CPU:
 * each failed write of its process log raised an error nobody heard, which the
 * process net logged, which failed again.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { postJson } from '../kit/harness.ts';
import { spawnSwitchyard, type SwitchyardProcess } from '../kit/router-process.ts';

const MODEL = 'm-log';
const chat = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  // Fields 14 and 15 of /proc/PID/stat, after the parenthesised command name.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

describe('log output gone', () => {
  let engine: EngineSimulator;
  let router: SwitchyardProcess | undefined;
  before(async () => {
    engine = new EngineSimulator({ model: MODEL, knobs: { ttftMs: 0, itlMs: 0, outputTokens: 2 } });
    await engine.listen();
    // A second backend nobody listens on: its scrapes fail, and the router says so on stderr.
    router = await spawnSwitchyard(['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', engine.url, '--backend', 'http://127.0.0.1:9', '--scrape-interval-ms', '100', '--access-log', 'json', '--log-level', 'debug', '--lifecycle-pre-stop-delay-ms', '0']);
  });
  after(async () => {
    await router?.stop();
    await engine.close();
  });

  it('keeps serving, without spinning, once nobody reads its stdout and stderr', async () => {
    assert.ok(router !== undefined);
    const base = `http://127.0.0.1:${router.ports['traffic'] as number}`;
    assert.equal((await postJson(`${base}/v1/chat/completions`, chat)).status, 200);
    router.child.stdout?.destroy();
    router.child.stderr?.destroy();
    // Access-log lines (stdout) and debug and scrape-failure lines (stderr) now fail to write.
    for (let i = 0; i < 20; i++) assert.equal((await postJson(`${base}/v1/chat/completions`, chat)).status, 200);
    const pid = router.child.pid as number;
    const before = cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const used = cpuSeconds(pid) - before;
    assert.ok(used < 0.3, `the router used ${used.toFixed(2)} s of CPU in 1 s with no traffic`);
    assert.equal((await fetch(`http://127.0.0.1:${router.ports['admin'] as number}/livez`)).status, 200);
    assert.equal((await postJson(`${base}/v1/chat/completions`, chat)).status, 200);
  });
});

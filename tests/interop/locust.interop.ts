/**
 * Locust in the shape of the original bug reports (tool-call JSON truncated
 * or interleaved under load, worst when streamed): 200 users sending chat
 * requests with a `search` tool, half streamed, every tool call parsed and
 * checked (python/locustfile.py). The same run goes through switchyard (its
 * own process, two `switchyard sim` engines with room for everyone, so
 * nothing is shed) and directly against one simulator, as the baseline of the
 * same machine and minute. Both must end with no failure and no malformed
 * tool call; the numbers are printed for the benchmark notes, never asserted.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordRow } from './compat-rows.ts';
import { startService, type ServiceProcess } from './fd-limited-processes.ts';
import { pythonFile, runPython, venvPython } from './python-client.ts';

const FILE = 'tests/interop/locust.interop.ts';
const MODEL = 'm-locust';
const USERS = 200;
const SPAWN_RATE = 100;
const RUN_TIME_S = 10;
/** Engine batch size and the capacity the router is told: far above what 200 users can hold open. */
const ENGINE_SEQS = 512;
/** Tool calls per answer (the simulator's toolCalls knob), so streamed deltas interleave by index. */
const TOOL_CALLS = 2;

/** What the locustfile writes at test stop. */
interface LocustSummary {
  ok: number;
  streamed: number;
  non_streamed: number;
  tool_calls_checked: number;
  malformed: number;
  failed: number;
  malformed_examples: string[];
  users: number;
  /** Locust's own totals at test stop; times in ms (streamed requests to the end of the stream). */
  requests: number;
  failures: number;
  rps: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
}

/** Until the router lists the model, i.e. has learned it from its engines' /v1/models. */
async function untilServed(base: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const listed = await fetch(`${base}/v1/models`)
      .then(async (r) => (r.ok ? ((await r.json()) as { data: { id: string }[] }).data.some((m) => m.id === MODEL) : false))
      .catch(() => false);
    if (listed) return;
    if (Date.now() > deadline) throw new Error(`the router at ${base} never listed ${MODEL}`);
    await sleep(50);
  }
}

describe('Locust: 200 users, chat with tool calls, half streamed', { timeout: 180_000 }, () => {
  const workDir = mkdtempSync(join(tmpdir(), 'switchyard-locust-'));
  let python: string;
  let version: string;
  const engines: ServiceProcess[] = [];
  let router: ServiceProcess | undefined;
  const urlOf = (p: ServiceProcess) => `http://127.0.0.1:${p.port}`;

  before(async () => {
    python = await venvPython('clients-requirements.txt');
    version = (await runPython(python, ['-c', 'import importlib.metadata as m; print(m.version("locust"))'], { timeoutMs: 30_000 })).stdout.trim();
    for (let i = 0; i < 2; i++) engines.push(await startService('sim', ['--listen', '127.0.0.1:0', '--model', MODEL, '--max-seqs', String(ENGINE_SEQS), '--tool-calls', String(TOOL_CALLS)]));
    // Known capacity turns the safe start off: a fresh router would otherwise meter its first requests per engine.
    const config = join(workDir, 'router.json');
    writeFileSync(config, JSON.stringify({ load: { capacity: Object.fromEntries(engines.map((e) => [urlOf(e), ENGINE_SEQS])) } }));
    router = await startService('serve', ['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--config', config, ...engines.flatMap((e) => ['--backend', urlOf(e)])]);
    await untilServed(urlOf(router));
  });

  after(async () => {
    await router?.stop();
    await Promise.all(engines.map((e) => e.stop()));
    rmSync(workDir, { recursive: true, force: true });
  });

  /** One headless Locust run against `host`; resolves with the locustfile's summary and the exit code. */
  async function locust(label: string, host: string): Promise<{ summary: LocustSummary; exit: number | null }> {
    const summaryFile = join(workDir, `${label}-summary.json`);
    const run = await runPython(
      join(dirname(python), 'locust'),
      ['-f', pythonFile('locustfile.py'), '--headless', '-u', String(USERS), '-r', String(SPAWN_RATE), '-t', `${RUN_TIME_S}s`, '--stop-timeout', '10', '--only-summary', '-H', host, '--loglevel', 'WARNING'],
      { timeoutMs: (RUN_TIME_S + 40) * 1000, env: { SWITCHYARD_MODEL: MODEL, SWITCHYARD_LOCUST_SUMMARY: summaryFile, SWITCHYARD_TOOL_CALLS: String(TOOL_CALLS) } },
    );
    let summary: LocustSummary;
    try {
      summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as LocustSummary;
    } catch {
      throw new Error(`locust (${label}) wrote no summary, exit ${String(run.code)}:\n${run.stdout}\n${run.stderr}`);
    }
    return { summary, exit: run.code };
  }

  it('through switchyard and directly against a simulator: no failure, no malformed tool call', async () => {
    assert.ok(router !== undefined);
    const runs = [
      { label: 'switchyard', ...(await locust('switchyard', urlOf(router))) },
      { label: 'direct (one sim)', ...(await locust('direct', urlOf(engines[0]!))) },
    ];
    const cell = (value: string | number, width: number) => String(value).padStart(width);
    // The table is for the benchmark notes: stdout, where the runner passes it through.
    const lines = [
      `Locust, ${USERS} users, ${RUN_TIME_S} s, chat with a search tool, half streamed (times in ms; streamed to the end of the stream)`,
      `${'target'.padEnd(18)}${cell('requests', 10)}${cell('req/s', 9)}${cell('p50', 7)}${cell('p95', 7)}${cell('p99', 7)}${cell('failures', 10)}${cell('malformed', 11)}`,
      ...runs.map(({ label, summary: s }) => `${label.padEnd(18)}${cell(s.requests, 10)}${cell(s.rps.toFixed(1), 9)}${cell(s.p50_ms, 7)}${cell(s.p95_ms, 7)}${cell(s.p99_ms, 7)}${cell(s.failures, 10)}${cell(s.malformed, 11)}`),
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
    for (const { label, summary, exit } of runs) {
      assert.deepEqual(summary.malformed_examples, [], `${label}: malformed tool calls`);
      assert.equal(summary.malformed, 0, label);
      assert.equal(summary.failed, 0, label);
      assert.equal(summary.failures, 0, `${label}: Locust failures`);
      assert.equal(exit, 0, `${label}: Locust exit code`);
      assert.equal(summary.users, USERS, `${label}: every user spawned`);
      assert.ok(summary.requests > USERS, `${label}: every user sent requests`);
      assert.equal(summary.ok, summary.requests, `${label}: every request counted was parsed and checked`);
      assert.ok(Math.abs(summary.streamed - summary.non_streamed) <= USERS, `${label}: half streamed (${summary.streamed} streamed, ${summary.non_streamed} not)`);
      assert.equal(summary.tool_calls_checked, TOOL_CALLS * summary.ok, `${label}: every tool call checked`);
    }
    recordRow({
      area: 'client',
      subject: 'Locust (PyPI)',
      version,
      exercised: `${USERS} users, ${RUN_TIME_S} s: chat with a search tool, half streamed, ${TOOL_CALLS} tool calls per answer; every call's arguments json.loads-checked, deltas accumulated per index`,
      result: `pass: ${USERS}/${USERS} users, 0 failures, 0 malformed tool calls (also direct to the simulator)`,
      test: `${FILE}: through switchyard and directly against a simulator`,
    });
  });
});

/**
 * `switchyard bench load` from outside: the real CLI as a child process
 * against an engine simulator and against a router (with API keys on) over
 * simulators, all on 127.0.0.1, each run a few seconds. The report's files,
 * sections and numbers, the key kept out of everything printed and written,
 * and one-line refusals of bad targets and options.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import type { LoadReport } from '../../loadtest/load/summary.ts';
import { freePorts } from '../kit/free-ports.ts';
import { startFleet, type Fleet } from '../kit/harness.ts';

const BIN = fileURLToPath(new URL('../../router/cli/bin.ts', import.meta.url));
const MODEL = 'bench-model';
const KEY = 'sk-bench-3f9c1a7e52d4';

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI without blocking this process's event loop (the engines and the router it loads live here). */
function run(args: readonly string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 30_000, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
  });
}

/** Every file of the report directory, read as text. */
function reportFiles(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).map((file) => [file, readFileSync(join(dir, file), 'utf8')]));
}

function assertKeyNowhere(ran: Ran, dir: string): void {
  assert.ok(!ran.stdout.includes(KEY), 'key on stdout');
  assert.ok(!ran.stderr.includes(KEY), 'key on stderr');
  for (const [file, text] of reportFiles(dir)) assert.ok(!text.includes(KEY), `key in ${file}`);
}

describe('switchyard bench load', () => {
  let dir: string;
  let keyFile: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-load-'));
    keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('against an engine simulator', () => {
    let sim: EngineSimulator;
    before(async () => {
      sim = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 64, ttftMs: 20, itlMs: 2 } });
      await sim.listen();
    });
    after(() => sim.close());

    it('writes the report (Markdown, JSON, charts): answers served without error, TTFT measured, output tokens as asked; the key is nowhere', async () => {
      const out = join(dir, 'sim');
      const ran = await run(['bench', 'load', '--target', sim.url, '--model', MODEL, '--rate', '20', '--duration', '2', '--warmup', '0.5', '--prompt-tokens', '50-100', '--output-tokens', '20-40', '--api-key-file', keyFile, '--out', out]);
      assert.equal(ran.code, 0, ran.stderr);
      const files = reportFiles(out);
      assert.deepEqual([...files.keys()].sort(), ['errors.svg', 'itl.svg', 'report.json', 'report.md', 'throughput.svg', 'ttft.svg']);
      const markdown = files.get('report.md') ?? '';
      assert.equal(ran.stdout, markdown, 'the report is what stdout printed');
      for (const heading of ['## Steps', '## Did the generator keep up?', '## Tokens', '## Errors', '## Charts']) assert.ok(markdown.split('\n').includes(heading), heading);
      assert.match(markdown, /^- 20 req\/s: (yes|NO): /m);
      const report = JSON.parse(files.get('report.json') ?? '{}') as LoadReport;
      const [step] = report.steps;
      assert.equal(report.steps.length, 1);
      assert.equal(report.idsChecked, true, 'the simulator derives answer ids from x-request-id');
      assert.ok(step !== undefined && step.requests.ok > 20, `served ${step?.requests.ok}`);
      assert.deepEqual([step.requests.failed, step.errors], [0, {}]);
      assert.ok(step.throughput.requestsPerS > 5 && step.throughput.outputTokensPerS > 5 * 20, JSON.stringify(step.throughput));
      assert.ok(step.ttftMs.p50 >= 20 && step.ttftMs.p50 < 1000, `TTFT p50 ${step.ttftMs.p50}`);
      assert.ok(step.itlMs.p50 >= 1, `ITL p50 ${step.itlMs.p50}`);
      // The simulator honours ignore_eos: each answer is as long as its max_tokens, and says so in its usage.
      assert.equal(step.tokens.fromUsage, step.requests.ok);
      assert.ok(Math.abs(step.tokens.output.mean - step.tokens.askedOutputMean) < 0.01, `output ${step.tokens.output.mean} vs asked ${step.tokens.askedOutputMean}`);
      assert.ok(step.tokens.output.mean >= 20 && step.tokens.output.mean <= 40);
      assert.ok(step.tokens.prompt.mean >= 50 && step.tokens.prompt.mean <= 110, `prompt tokens ${step.tokens.prompt.mean}`);
      assert.ok(step.seconds.some((s) => s.ok > 0 && s.outputTokens > 0));
      assert.ok(files.get('ttft.svg')?.startsWith('<svg'));
      assertKeyNowhere(ran, out);
    });

    it('refuses a model the target does not serve before any load, with the target\'s own words, exit 2', async () => {
      const ran = await run(['bench', 'load', '--target', sim.url, '--model', 'no-such-model', '--rate', '5', '--duration', '1']);
      assert.equal(ran.code, 2);
      assert.match(ran.stderr, /^switchyard bench load: .* answered 404 to one chat completion for model "no-such-model": .*does not exist/);
      assert.equal(ran.stderr.trim().split('\n').length, 1);
    });
  });

  describe('against a router with API keys over two simulators', () => {
    let fleet: Fleet;
    before(async () => {
      const keys = join(dir, 'keys.yaml');
      writeFileSync(keys, `tenants:\n  bench: {}\nkeys:\n  - key: ${KEY}\n    tenant: bench\n`);
      const engine = { model: MODEL, knobs: { maxSeqs: 32, ttftMs: 15, itlMs: 2 } };
      fleet = await startFleet([engine, engine], ['--auth-api-keys-file', keys]);
    });
    after(() => fleet.close());

    it('sweeps --rates into one row per rate, sends the key (the router lets every request in) and conversations on their session keys', async () => {
      const out = join(dir, 'router');
      const ran = await run(['bench', 'load', '--target', `${fleet.base}/v1`, '--model', MODEL, '--rates', '10,25', '--duration', '1.5', '--warmup', '0.5', '--prompt-tokens', '30', '--output-tokens', '16', '--sessions', '3', '--turns', '2', '--api-key-file', keyFile, '--out', out]);
      assert.equal(ran.code, 0, ran.stderr);
      const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as LoadReport;
      assert.deepEqual(report.steps.map((s) => s.label), ['10 req/s', '25 req/s']);
      for (const step of report.steps) {
        assert.ok(step.requests.ok > 5, `${step.label}: ${step.requests.ok} served`);
        assert.deepEqual(step.errors, {}, `${step.label}: ${JSON.stringify(step.failureExamples)}`);
        assert.equal(step.tokens.output.mean, 16);
      }
      const markdown = readFileSync(join(out, 'report.md'), 'utf8');
      const stepRows = markdown.split('\n').filter((line) => /^\| (10|25) req\/s \| \d+ \| \d+ \|/.test(line));
      assert.deepEqual(stepRows.map((row) => row.split('|')[1]?.trim()), ['10 req/s', '25 req/s']);
      assert.ok(existsSync(join(out, 'sweep.svg')), 'a sweep gets its latency-by-step chart');
      const sessionKeys = fleet.engines.flatMap((e) => [...e.sessions.keys()]).filter((key) => key.includes('-session-'));
      assert.equal(new Set(sessionKeys).size, 6, `three sessions per step: ${sessionKeys.join(', ')}`);
      assertKeyNowhere(ran, out);
    });

    it('without the key the router refuses the preflight: exit 2, one line', async () => {
      const ran = await run(['bench', 'load', '--target', fleet.base, '--model', MODEL, '--rate', '5', '--duration', '1']);
      assert.equal(ran.code, 2);
      assert.match(ran.stderr, /^switchyard bench load: .* answered 401 /);
    });
  });

  it('refuses a bad target, an unknown option and a missing shape in one line each, exit 2, no stack trace', async () => {
    const [closed] = await freePorts(1);
    const cases: [string[], RegExp][] = [
      [['--target', 'ftp://127.0.0.1/', '--model', 'm', '--rate', '1'], /--target: only http:\/\/ and https:\/\/ URLs are supported/],
      [['--target', `http://127.0.0.1:${closed}`, '--model', 'm', '--rate', '1'], /cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: connection refused/],
      [['--target', 'http://127.0.0.1:9', '--model', 'm', '--rate', '1', '--sesions', '2'], /unknown option "--sesions"; did you mean --sessions\?/],
      [['--target', 'http://127.0.0.1:9', '--model', 'm'], /exactly one load shape/],
    ];
    for (const [args, pattern] of cases) {
      const ran = await run(['bench', 'load', ...args]);
      assert.equal(ran.code, 2, args.join(' '));
      assert.match(ran.stderr, pattern);
      assert.equal(ran.stderr.trim().split('\n').length, 1, ran.stderr);
      assert.equal(ran.stdout, '');
    }
  });

  it('bench --help points to the comparison scenarios in a checkout; bench load --help lists the options', async () => {
    const help = await run(['bench', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /npm run bench -- <scenario>/);
    const load = await run(['bench', 'load', '--help']);
    assert.equal(load.code, 0);
    assert.match(load.stdout, /^Usage: switchyard bench load /);
    assert.match(load.stdout, /--api-key-file FILE/);
    const unknown = await run(['bench', 'lod']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown subcommand "lod"; did you mean load\?/);
  });
});

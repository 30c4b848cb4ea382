/**
 * Command-line HTTP clients against switchyard.
 *
 * ApacheBench with the original crash report's load (`ab -n 10000 -c 2000`,
 * small chat POSTs): a Python router reset connections there. Against a
 * router running as its own process in front of simulator processes, ab must
 * see no failed request, and every answer that is not 2xx must be a 429 shed
 * (counted from the router's own metrics, since ab only counts non-2xx). The
 * same load straight at one simulator, in the same run, is the baseline of
 * the printed table.
 *
 * `curl -N` reading a streamed chat completion: the bytes are exactly the
 * SSE the engine sent, end with `data: [DONE]`, and arrive as the engine
 * writes them, not at the end.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { abVersion, parseAbOutput, type AbResult } from '../kit/ab.ts';
import { startFleet, type Fleet } from '../kit/harness.ts';
import { answersByStatus, difference, shedByReason } from './admin-metrics.ts';
import { recordRow } from './compat-rows.ts';
import { spawnWithFdLimit, startService, type ServiceProcess } from './fd-limited-processes.ts';

const MODEL = 'interop-ab';
const FILE = 'tests/interop/ab-curl.interop.ts';
const REQUESTS = 10_000;
const CONCURRENCY = 2_000;

/** ab's version (`2.3`), or a failure telling how to install it. */
function installedAbVersion(): string {
  const version = abVersion();
  assert.ok(version, 'ab (ApacheBench) is not installed: install the apache2-utils package (apt-get install apache2-utils).');
  return version;
}

/** Runs ab under the raised open-file limit and parses its summary. */
async function runAb(url: string, bodyFile: string): Promise<AbResult> {
  // -l: answers differ in length (ids, 429 bodies); -r: count a receive error as a failed request instead of stopping.
  const args = ['-n', String(REQUESTS), '-c', String(CONCURRENCY), '-l', '-r', '-s', '60', '-p', bodyFile, '-T', 'application/json', url];
  const child = spawnWithFdLimit('ab', args, ['ignore', 'pipe', 'pipe']);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (output += text));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  assert.equal(code, 0, `ab exited with ${String(code)}:\n${output}`);
  return parseAbOutput(output);
}

function table(runs: readonly (readonly [string, AbResult])[]): string {
  const head = ['run', 'requests/s', 'p50 ms', 'p99 ms', 'non-2xx', 'failed'];
  const rows = runs.map(([name, r]) => [name, r.requestsPerSecond.toFixed(0), String(r.p50Ms), String(r.p99Ms), String(r.non2xx), String(r.failed)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

describe(`ab -n ${REQUESTS} -c ${CONCURRENCY} (the crash report's load)`, () => {
  let dir: string;
  let engines: ServiceProcess[] = [];
  let router: ServiceProcess | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-ab-'));
    const knobs = ['--ttft-ms', '5', '--itl-ms', '0', '--output-tokens', '16', '--max-seqs', '256'];
    engines = await Promise.all([0, 1].map(() => startService('sim', ['--listen', '127.0.0.1:0', '--model', MODEL, ...knobs])));
    router = await startService('serve', [
      '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--lifecycle-drain-timeout-ms', '1000',
      ...engines.flatMap((engine) => ['--backend', `http://127.0.0.1:${engine.port}`]),
    ]);
    // Routing works (an engine's models are known) before the load starts.
    const deadline = Date.now() + 10_000;
    while ((await answersOf(`http://127.0.0.1:${router.port}`)) !== 200) {
      assert.ok(Date.now() < deadline, 'router never routed a request');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  after(async () => {
    await router?.stop();
    await Promise.all(engines.map((engine) => engine.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('never fails a connection through switchyard; every non-2xx is a 429', async () => {
    const version = installedAbVersion();
    assert.ok(router);
    const bodyFile = join(dir, 'chat.json');
    writeFileSync(bodyFile, JSON.stringify({ model: MODEL, messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'What is the capital of France?' }], max_tokens: 16 }));
    const direct = await runAb(`http://127.0.0.1:${engines[0]!.port}/v1/chat/completions`, bodyFile);
    const admin = `http://127.0.0.1:${router.admin}`;
    const [answersBefore, shedBefore] = await Promise.all([answersByStatus(admin), shedByReason(admin)]);
    const routed = await runAb(`http://127.0.0.1:${router.port}/v1/chat/completions`, bodyFile);
    const answers = difference(answersBefore, await answersByStatus(admin));
    const shed = difference(shedBefore, await shedByReason(admin));
    process.stdout.write(`\nab -n ${REQUESTS} -c ${CONCURRENCY}, small chat POSTs (non-streamed, 16 output tokens)\n${table([['direct to one simulator', direct], ['through switchyard (2 simulators)', routed]])}\n`);
    process.stdout.write(`switchyard answers by status ${JSON.stringify(Object.fromEntries(answers))}, shed by reason ${JSON.stringify(Object.fromEntries(shed))}\n\n`);

    assert.equal(routed.complete, REQUESTS);
    assert.equal(routed.failed, 0, 'ab saw failed requests through switchyard');
    const answered = [...answers.values()].reduce((a, b) => a + b, 0);
    assert.equal(answered, REQUESTS, `the router answered ${answered} requests`);
    const others = [...answers.keys()].filter((status) => !/^2\d\d$/.test(status) && status !== '429');
    assert.deepEqual(others, [], 'every non-2xx answer is a 429');
    assert.equal(answers.get('429') ?? 0, routed.non2xx, 'ab counted as non-2xx exactly the 429s the router sent');
    recordRow({
      area: 'client',
      subject: 'ab (ApacheBench)',
      version,
      exercised: `ab -n ${REQUESTS} -c ${CONCURRENCY} small chat POSTs, router and simulators as processes`,
      result: 'pass: 0 failed requests, every non-2xx a 429',
      test: `${FILE}: never fails a connection through switchyard; every non-2xx is a 429`,
    });
  });
});

/** The status of one small chat request to `base`, or 0 when it could not be sent. */
async function answersOf(base: string): Promise<number> {
  try {
    const response = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'ready?' }] }) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

describe('curl -N reading a streamed chat completion', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([{ model: MODEL, knobs: { ttftMs: 20, itlMs: 100, outputTokens: 6 } }]);
  });
  after(() => fleet.close());

  it('gets the SSE bytes the engine sent, incrementally, ending with [DONE]', async () => {
    const probe = spawnSync('curl', ['--version'], { encoding: 'utf8' });
    if (probe.error !== undefined) assert.fail(`curl is not installed: install the curl package. ${probe.error.message}`);
    const version = /^curl (\S+)/.exec(probe.stdout)?.[1];
    assert.ok(version, `unexpected curl --version output: ${probe.stdout}`);
    const engine = fleet.engines[0]!;
    const requestId = 'curl-sse-1';
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Tell me a story.' }], stream: true });
    const curl = spawn('curl', ['-sN', '-X', 'POST', '-H', 'content-type: application/json', '-H', `x-request-id: ${requestId}`, '--data-binary', body, `${fleet.base}/v1/chat/completions`], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let engineDoneAtFirstChunk: boolean | undefined;
    curl.stdout.on('data', (chunk: Buffer) => {
      // The engine's record of what it sent appears only once its last byte is written.
      engineDoneAtFirstChunk ??= engine.sent(requestId) !== undefined;
      chunks.push(chunk);
    });
    const code = await new Promise<number | null>((resolve) => curl.once('exit', resolve));
    assert.equal(code, 0);
    const received = Buffer.concat(chunks);
    const sent = engine.sent(requestId);
    assert.ok(sent?.complete, 'the engine finished its response');
    assert.equal(createHash('sha256').update(received).digest('hex'), sent.sha256, 'curl got exactly the bytes the engine sent');
    assert.ok(received.toString('utf8').endsWith('data: [DONE]\n\n'));
    assert.equal(engineDoneAtFirstChunk, false, 'the first event reached curl before the engine wrote its last');
    recordRow({
      area: 'client',
      subject: 'curl',
      version,
      exercised: 'curl -sN streamed chat completion: same SSE bytes as the engine sent, incremental, ends with [DONE]',
      result: 'pass',
      test: `${FILE}: gets the SSE bytes the engine sent, incrementally, ending with [DONE]`,
    });
  });
});

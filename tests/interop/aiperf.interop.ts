/**
 * AIPerf (NVIDIA's LLM benchmark client, the successor of genai-perf) runs
 * its standard chat benchmark through switchyard against a `switchyard sim`
 * engine: synthetic prompts of a fixed token length, streamed answers, a
 * fixed concurrency and request count. Its numbers must agree with the
 * project's own load generator (loadtest/bench) sent the same load through
 * the same router: throughput within 15 %, TTFT p50 within 20 %, while the
 * AIPerf client, all its processes together, stays under half a core.
 *
 * Offline: AIPerf counts tokens with a Hugging Face tokenizer it would fetch
 * from the Hub. Here it gets one the suite trains (python/build_tokenizer.py),
 * laid out as a hub-cache snapshot, with HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE
 * set and every proxy variable pointing at a closed loopback port, so any
 * attempt to leave the machine fails the run. (A plain directory path does not
 * work once offline mode is on: AIPerf 0.13 then resolves it as a repository
 * id and fails.)
 *
 * Two runs of AIPerf, because its plain `--concurrency N` mode polls for a
 * free slot without sleeping (0.13: the timing service spins a core whatever
 * the load, measured at concurrency 1 as well), which breaks the half-core
 * bar at any load:
 *
 * 1. The comparison: `--concurrency 8 --request-rate 200 --arrival-pattern
 *    constant`. The rate only paces the slot poll (every 5 ms); 8 requests of
 *    ~0.7 s stay in flight (checked through AIPerf's effective concurrency),
 *    so the load is the generator's closed loop at concurrency 8.
 * 2. The plain `--concurrency 8` mode, also scraping switchyard's admin
 *    /metrics (AIPerf's default scrape of `<url>/metrics` finds nothing on the
 *    traffic port): no errors, switchyard's metrics collected; its numbers and
 *    client CPU are printed, not held to the bars.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Histogram } from '../../loadtest/bench/histogram.ts';
import { runGenerators, type GeneratorRun } from '../../loadtest/bench/generators.ts';
import { waitForModels } from '../kit/processes.ts';
import { recordRow } from './compat-rows.ts';
import { startService, type ServiceProcess } from './fd-limited-processes.ts';
import { coresBetween, runMeasured, type MeasuredRun } from '../kit/process-tree-cpu.ts';
import { pythonFile, runPython, venvPython } from './python-client.ts';

const FILE = 'tests/interop/aiperf.interop.ts';
const MODEL = 'm-aiperf';
const TOKENIZER_REPO = 'switchyard/interop-bpe';
const CONCURRENCY = 8;
const REQUESTS = 200;
/** The plain concurrency mode burns a core: fewer requests keep the suite's time and the machine's other tenants in mind. */
const BURST_REQUESTS = 100;
const WARMUP_REQUESTS = 16;
/** Synthetic prompt length (tokens of the suite's tokenizer) and answer length (engine tokens). */
const ISL = 128;
const OSL = 64;
/** Engine: 50 ms to the first token, 10 ms between tokens, room for everyone (nothing queues or sheds). */
const ENGINE_SEQS = 64;
const SIM_KNOBS = ['--max-seqs', String(ENGINE_SEQS), '--ttft-ms', '50', '--itl-ms', '10', '--output-tokens', String(OSL)];
/** How often AIPerf's rate-paced mode looks for a free slot (per second). */
const SLOT_POLL_RATE = 200;
/** A closed port: every proxy variable points here, so the client cannot reach anything off the machine. */
const NO_NETWORK = 'http://127.0.0.1:9';

/** The fields of AIPerf's `profile_export_aiperf.json` the test reads (times in ms). */
interface AiperfSummary {
  aiperf_version: string;
  request_throughput: { avg: number };
  time_to_first_token: { p50: number };
  request_count: { avg: number };
  input_sequence_length: { avg: number };
  output_sequence_length: { avg: number };
  effective_concurrency?: { avg: number };
  error_summary: { error_details: unknown; count: number }[];
  was_cancelled: boolean;
  /** Start and end of the measured phase, local time without an offset. */
  start_time: string;
  end_time: string;
}

/** The part of AIPerf's `server_metrics_export.json` the test reads. */
interface ServerMetricsExport {
  summary: { endpoints_successful: string[] };
  metrics: Record<string, { series: { labels: Record<string, string>; stats: { total?: number; p50_estimate?: number } }[] } | undefined>;
}

/** One line of the comparison table. */
interface Row {
  readonly client: string;
  readonly ok: number;
  readonly errors: number;
  readonly rps: number;
  readonly ttftP50: number;
  /** Cores over the measured phase, and over the whole process life (start-up included) when known. */
  readonly cores: number;
  readonly lifeCores: number | undefined;
}

function printTable(title: string, rows: readonly Row[]): void {
  const cell = (value: string, width: number) => value.padStart(width);
  const lines = [`${'client'.padEnd(34)}${cell('ok', 6)}${cell('errors', 8)}${cell('req/s', 8)}${cell('TTFT p50 ms', 13)}${cell('client CPU (run)', 18)}${cell('client CPU (life)', 19)}`];
  for (const r of rows) {
    const life = r.lifeCores === undefined ? '-' : `${r.lifeCores.toFixed(2)} cores`;
    lines.push(`${r.client.padEnd(34)}${cell(String(r.ok), 6)}${cell(String(r.errors), 8)}${cell(r.rps.toFixed(2), 8)}${cell(r.ttftP50.toFixed(1), 13)}${cell(`${r.cores.toFixed(2)} cores`, 18)}${cell(life, 19)}`);
  }
  process.stdout.write(`\n${title}\n${lines.join('\n')}\n`);
}

describe('AIPerf: chat benchmark through switchyard, against the project generator', { timeout: 420_000 }, () => {
  const workDir = mkdtempSync(join(tmpdir(), 'switchyard-aiperf-'));
  const hubCache = join(workDir, 'hub');
  let aiperf: string;
  let engine: ServiceProcess | undefined;
  let router: ServiceProcess | undefined;
  let base: string;
  let admin: string;
  /** The generator's run of test 1, printed next to the plain concurrency mode. */
  let generatorRow: Row | undefined;

  before(async () => {
    const python = await venvPython('aiperf-requirements.txt');
    aiperf = join(dirname(python), 'aiperf');
    const built = await runPython(python, [pythonFile('build_tokenizer.py'), join(workDir, 'tokenizer'), '--hub-cache', hubCache, '--repo-id', TOKENIZER_REPO], {
      timeoutMs: 120_000,
      env: { HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', HF_HOME: join(workDir, 'hf-home') },
    });
    assert.equal(built.code, 0, `build_tokenizer.py failed:\n${built.stdout}\n${built.stderr}`);
    engine = await startService('sim', ['--listen', '127.0.0.1:0', '--model', MODEL, ...SIM_KNOBS]);
    const engineUrl = `http://127.0.0.1:${engine.port}`;
    // Known capacity turns the safe start off: a fresh router would otherwise meter (and shed) the first seconds.
    const config = join(workDir, 'router.json');
    writeFileSync(config, JSON.stringify({ load: { capacity: { [engineUrl]: ENGINE_SEQS } } }));
    router = await startService('serve', ['--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--lifecycle-pre-stop-delay-ms', '0', '--config', config, '--backend', engineUrl]);
    base = `http://127.0.0.1:${router.port}`;
    admin = `http://127.0.0.1:${router.admin}`;
    await waitForModels(base);
  });

  after(async () => {
    await router?.stop();
    await engine?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  /** One `aiperf profile` run into `workDir/label`; resolves with its summary, its CPU and its artifact directory. */
  async function profile(label: string, extra: readonly string[], requests: number): Promise<{ summary: AiperfSummary; run: MeasuredRun; dir: string }> {
    const dir = join(workDir, label);
    const args = [
      'profile', '--model', MODEL, '--url', base, '--endpoint-type', 'chat', '--streaming',
      '--concurrency', String(CONCURRENCY), '--request-count', String(requests), '--warmup-request-count', String(WARMUP_REQUESTS),
      '--isl', String(ISL), '--osl', String(OSL), '--tokenizer', TOKENIZER_REPO, '--random-seed', '1',
      '--artifact-dir', dir, '--ui', 'none', '--no-gpu-telemetry', ...extra,
    ];
    // AIPerf leaves its memory-mapped dataset in the temp directory: keep it inside workDir, which after() removes.
    const tmp = join(workDir, 'tmp');
    mkdirSync(tmp, { recursive: true });
    const env = {
      TMPDIR: tmp,
      HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', HF_HOME: join(workDir, 'hf-home'), HF_HUB_CACHE: hubCache,
      HTTP_PROXY: NO_NETWORK, HTTPS_PROXY: NO_NETWORK, ALL_PROXY: NO_NETWORK, http_proxy: NO_NETWORK, https_proxy: NO_NETWORK, all_proxy: NO_NETWORK,
      NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost', PYTHONUNBUFFERED: '1',
    };
    const run = await runMeasured(aiperf, args, { env, timeoutMs: 150_000 });
    let summary: AiperfSummary;
    try {
      summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as AiperfSummary;
    } catch {
      throw new Error(`aiperf (${label}) wrote no summary, exit ${String(run.code)}:\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-4000)}`);
    }
    assert.equal(run.code, 0, `aiperf (${label}) exit code:\n${run.stderr.slice(-4000)}`);
    // Offline for real: the tokenizer came from the suite's hub cache, not from anywhere else.
    const snapshots = join(hubCache, `models--${TOKENIZER_REPO.replace('/', '--')}`, 'snapshots');
    const log = readFileSync(join(dir, 'logs', 'aiperf.log'), 'utf8').split('\n');
    assert.ok(log.some((line) => line.includes('Initialized tokenizers') && line.includes(snapshots)), `${label}: tokenizer not loaded from the suite's hub cache`);
    return { summary, run, dir };
  }

  /** Checks what every AIPerf run must hold and returns its table row. */
  function aiperfRow(client: string, summary: AiperfSummary, run: MeasuredRun, requests: number): Row {
    const errors = summary.error_summary.reduce((n, e) => n + e.count, 0);
    assert.deepEqual(summary.error_summary, [], `${client}: AIPerf recorded errors`);
    assert.equal(summary.was_cancelled, false, client);
    assert.equal(summary.request_count.avg, requests, `${client}: every request answered`);
    assert.equal(summary.input_sequence_length.avg, ISL, `${client}: synthetic prompts of ${ISL} tokens`);
    assert.ok((summary.effective_concurrency?.avg ?? 0) >= 0.8 * CONCURRENCY, `${client}: ${CONCURRENCY} requests kept in flight (effective concurrency ${String(summary.effective_concurrency?.avg)})`);
    const from = new Date(summary.start_time).getTime();
    const to = new Date(summary.end_time).getTime();
    assert.ok(to > from && from >= run.startedAtMs && to <= run.endedAtMs, `${client}: measured phase ${summary.start_time}..${summary.end_time} inside the process life`);
    return {
      client,
      ok: summary.request_count.avg,
      errors,
      rps: summary.request_throughput.avg,
      ttftP50: summary.time_to_first_token.p50,
      cores: coresBetween(run.samples, from, to),
      lifeCores: run.cpuMs / (run.endedAtMs - run.startedAtMs),
    };
  }

  /** The project's generator, closed loop at the same concurrency, sending prompts of AIPerf's mean size. */
  async function generator(promptBytes: number): Promise<GeneratorRun> {
    return runGenerators(
      {
        target: base,
        request: { path: '/v1/chat/completions', model: MODEL, stream: true, tools: false, promptBytes, headers: {}, users: 0, checkIds: true },
        mode: { kind: 'closed', concurrency: CONCURRENCY },
        // About as many requests as AIPerf's warm-up sends at this concurrency.
        warmupMs: 1_500,
        requests: REQUESTS,
        idPrefix: 'aiperf-compare',
        seed: 1,
      },
      { processes: 1, quiet: true, label: 'generator' },
    );
  }

  it('rate-paced concurrency: throughput within 15 % and TTFT p50 within 20 % of the project generator, client under half a core', async () => {
    const { summary, run, dir } = await profile('paced', ['--request-rate', String(SLOT_POLL_RATE), '--arrival-pattern', 'constant', '--no-server-metrics'], REQUESTS);
    const paced = aiperfRow(`AIPerf, ${CONCURRENCY} concurrent (rate-paced)`, summary, run, REQUESTS);

    // The same prompts in size: the mean UTF-8 length of what AIPerf sent.
    const inputs = JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as { data: { payloads: { messages: { content: string }[] }[] }[] };
    const sizes = inputs.data.flatMap((s) => s.payloads.map((p) => Buffer.byteLength(p.messages.map((m) => m.content).join(''))));
    const promptBytes = Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length);
    const gen = await generator(promptBytes);
    assert.equal(gen.failed, 0, `generator failures: ${JSON.stringify(gen.failureExamples)}`);
    assert.equal(gen.shed, 0, 'generator: nothing shed');
    assert.equal(gen.ok, REQUESTS);
    generatorRow = {
      client: `project generator, ${CONCURRENCY} concurrent`,
      ok: gen.ok,
      errors: gen.failed,
      rps: (gen.ok * 1000) / gen.windowMs,
      ttftP50: Histogram.of([gen.ttft]).percentiles().p50,
      cores: gen.processes.reduce((n, p) => n + p.cpuShare, 0),
      lifeCores: undefined,
    };

    printTable(
      `AIPerf ${summary.aiperf_version} vs the project generator through switchyard: chat, streamed, ${CONCURRENCY} concurrent, ${REQUESTS} requests, prompts ${ISL} tokens (${promptBytes} bytes), answers ${OSL} engine tokens (simulator: TTFT 50 ms, 10 ms/token)`,
      [paced, generatorRow],
    );
    const rpsRatio = paced.rps / generatorRow.rps;
    const ttftRatio = paced.ttftP50 / generatorRow.ttftP50;
    process.stdout.write(`AIPerf/generator: throughput ${rpsRatio.toFixed(3)}, TTFT p50 ${ttftRatio.toFixed(3)}; AIPerf effective concurrency ${String(summary.effective_concurrency?.avg.toFixed(2))}\n`);
    assert.ok(Math.abs(rpsRatio - 1) <= 0.15, `throughput: AIPerf ${paced.rps.toFixed(2)} vs generator ${generatorRow.rps.toFixed(2)} req/s`);
    assert.ok(Math.abs(ttftRatio - 1) <= 0.2, `TTFT p50: AIPerf ${paced.ttftP50.toFixed(1)} vs generator ${generatorRow.ttftP50.toFixed(1)} ms`);
    assert.ok(paced.cores < 0.5, `AIPerf used ${paced.cores.toFixed(2)} cores over its measured phase`);

    recordRow({
      area: 'client',
      subject: 'AIPerf (PyPI)',
      version: summary.aiperf_version,
      exercised: `aiperf profile, chat endpoint, streamed: ${CONCURRENCY} concurrent (rate-paced slots), ${REQUESTS} requests, synthetic ${ISL}-token prompts, ${OSL}-token answers; tokenizer built by the suite, Hugging Face offline`,
      result: 'pass: 0 errors; throughput within 15% and TTFT p50 within 20% of the project generator; AIPerf under half a core',
      test: `${FILE}: rate-paced concurrency`,
    });
  });

  it('plain --concurrency mode: no errors, switchyard metrics scraped from the admin port', async () => {
    const { summary, run, dir } = await profile('burst', ['--server-metrics', `${admin}/metrics`], BURST_REQUESTS);
    const burst = aiperfRow(`AIPerf, ${CONCURRENCY} concurrent (plain)`, summary, run, BURST_REQUESTS);
    const metrics = JSON.parse(readFileSync(join(dir, 'server_metrics_export.json'), 'utf8')) as ServerMetricsExport;
    assert.deepEqual(metrics.summary.endpoints_successful, [`${admin}/metrics`], 'AIPerf scraped the admin port (the traffic port serves no /metrics)');
    // AIPerf names counter families without `_total` and reports their growth over its measured phase.
    const answered = metrics.metrics['switchyard_requests']?.series ?? [];
    const byStatus = (ok: boolean) => answered.filter((s) => (s.labels['status'] === '200') === ok).reduce((n, s) => n + (s.stats.total ?? 0), 0);
    assert.ok(byStatus(true) > 0, 'switchyard counted answered requests in the measured phase');
    assert.equal(byStatus(false), 0, 'switchyard answered nothing but 200 in the measured phase');
    const routerTtft = metrics.metrics['switchyard_time_to_first_token_seconds']?.series[0]?.stats.p50_estimate;
    assert.ok(routerTtft !== undefined && routerTtft > 0, "AIPerf collected switchyard's TTFT histogram");
    printTable(
      `AIPerf ${summary.aiperf_version} plain --concurrency ${CONCURRENCY} (${BURST_REQUESTS} requests; its timing service polls for free slots without sleeping)`,
      generatorRow === undefined ? [burst] : [burst, generatorRow],
    );
    process.stdout.write(`switchyard's own TTFT p50 (its histogram, as AIPerf scraped it): ${(routerTtft * 1000).toFixed(1)} ms\n\n`);
    recordRow({
      area: 'client',
      subject: 'AIPerf (PyPI)',
      version: summary.aiperf_version,
      exercised: `aiperf profile --concurrency ${CONCURRENCY} (plain), chat endpoint, streamed, ${BURST_REQUESTS} requests; server metrics from switchyard's admin /metrics`,
      result: 'pass: 0 errors; switchyard metrics collected',
      test: `${FILE}: plain --concurrency mode`,
    });
  });
});

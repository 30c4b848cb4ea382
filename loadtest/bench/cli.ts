/**
 * `switchyard bench` / `npm run bench`: router vs direct-to-engine, measured
 * in the same run, for non-streaming and streaming chat. Prints a Markdown
 * table and writes JSON plus Markdown under loadtest/results/.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runClosedLoop, type RunSpec } from './load-generator.ts';
import { canPin, cpuTimeMs, startSwitchyard, waitForModels } from './processes.ts';
import { summarize } from './stats.ts';

const USAGE = `Usage: switchyard bench [--duration-s N] [--warmup-s N] [--concurrency N] [--stream-concurrency N] [--out DIR]

Starts an engine simulator and a router (pinned to core 0 when taskset works),
then measures direct-to-engine and through-the-router requests/s and latency,
non-streaming and streaming, in the same run.
`;

interface BenchOptions {
  durationS: number;
  warmupS: number;
  concurrency: number;
  streamConcurrency: number;
  out: string;
}

function parse(argv: readonly string[]): BenchOptions | undefined {
  const options: BenchOptions = {
    durationS: 10,
    warmupS: 2,
    concurrency: 32,
    streamConcurrency: 200,
    out: fileURLToPath(new URL('../results', import.meta.url)),
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--help' || flag === '-h') return undefined;
    if (value === undefined) throw new Error(`${String(flag)} needs a value`);
    i++;
    if (flag === '--duration-s') options.durationS = Number(value);
    else if (flag === '--warmup-s') options.warmupS = Number(value);
    else if (flag === '--concurrency') options.concurrency = Number(value);
    else if (flag === '--stream-concurrency') options.streamConcurrency = Number(value);
    else if (flag === '--out') options.out = value;
    else throw new Error(`unknown flag ${String(flag)}`);
  }
  return options;
}

interface Row {
  readonly scenario: string;
  readonly target: 'direct' | 'router';
  readonly concurrency: number;
  readonly requests: number;
  readonly errors: number;
  readonly errorExamples: string[];
  readonly rps: number;
  readonly latencyMs: ReturnType<typeof summarize>;
  readonly firstByteMs: ReturnType<typeof summarize>;
  /** Share of one core the measured server process used during the run (0-1), when /proc tells. */
  readonly serverCpu: number | undefined;
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const fmt = (n: number) => (Number.isNaN(n) ? '-' : n >= 100 ? n.toFixed(0) : n.toFixed(2));

function markdown(rows: readonly Row[], facts: Record<string, unknown>): string {
  const lines = [
    `Machine: ${String(facts['cpu'])} × ${String(facts['cores'])} cores, ${String(facts['memoryGiB'])} GiB, Node ${String(facts['node'])}, commit ${String(facts['commit'])}, router pinned: ${String(facts['pinned'])}`,
    '',
    '| scenario | target | concurrency | requests | errors | req/s | latency p50 ms | latency p99 ms | first byte p50 ms | first byte p99 ms | server CPU (of one core) | router/direct req/s |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const direct = rows.find((r) => r.scenario === row.scenario && r.target === 'direct');
    const ratio = row.target === 'router' && direct ? (row.rps / direct.rps).toFixed(2) : '';
    lines.push(
      `| ${row.scenario} | ${row.target} | ${row.concurrency} | ${row.requests} | ${row.errors} | ${fmt(row.rps)} | ${fmt(row.latencyMs.p50)} | ${fmt(row.latencyMs.p99)} | ${fmt(row.firstByteMs.p50)} | ${fmt(row.firstByteMs.p99)} | ${row.serverCpu === undefined ? '-' : `${Math.round(row.serverCpu * 100)}%`} | ${ratio} |`,
    );
  }
  return lines.join('\n');
}

/** Entry point; returns the exit code (1 when any request failed). */
export async function bench(argv: readonly string[]): Promise<number> {
  const options = parse(argv);
  if (options === undefined) {
    console.log(USAGE);
    return 0;
  }
  const pinned = canPin();
  if (pinned) execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const engine = await startSwitchyard(['sim', '--listen', '127.0.0.1:0', '--model', 'bench', '--max-seqs', '100000'], 'engine simulator listening', pinned ? 1 : undefined);
  const enginePort = engine.ports['port'] as number;
  const router = await startSwitchyard(
    ['serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--backend', `http://127.0.0.1:${enginePort}`, '--log-level', 'info', '--lifecycle-pre-stop-delay-ms', '0'],
    'switchyard listening',
    pinned ? 0 : undefined,
  );
  const rows: Row[] = [];
  try {
    await waitForModels(`http://127.0.0.1:${router.ports['traffic'] as number}`);
    const targets = { direct: `http://127.0.0.1:${enginePort}`, router: `http://127.0.0.1:${router.ports['traffic'] as number}` } as const;
    const scenarios: { name: string; stream: boolean; concurrency: number; headers: Record<string, string> }[] = [
      { name: 'chat non-stream (16 tokens, no engine delay)', stream: false, concurrency: options.concurrency, headers: { 'x-sim-ttft-ms': '0', 'x-sim-itl-ms': '0' } },
      { name: 'chat stream (32 tokens, ttft 5 ms, itl 1 ms)', stream: true, concurrency: options.streamConcurrency, headers: { 'x-sim-ttft-ms': '5', 'x-sim-itl-ms': '1', 'x-sim-output-tokens': '32' } },
    ];
    for (const scenario of scenarios) {
      for (const target of ['direct', 'router'] as const) {
        const spec: RunSpec = {
          target: targets[target],
          path: '/v1/chat/completions',
          body: JSON.stringify({ model: 'bench', stream: scenario.stream, messages: [{ role: 'user', content: 'Say something short.' }] }),
          headers: scenario.headers,
          stream: scenario.stream,
          concurrency: scenario.concurrency,
          warmupMs: options.warmupS * 1000,
          durationMs: options.durationS * 1000,
        };
        const server = target === 'router' ? router.child.pid : engine.child.pid;
        const cpuBefore = cpuTimeMs(server);
        const wallBefore = performance.now();
        const samples = await runClosedLoop(spec);
        const cpuAfter = cpuTimeMs(server);
        const serverCpu = cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / (performance.now() - wallBefore);
        const row: Row = {
          scenario: scenario.name,
          target,
          concurrency: scenario.concurrency,
          requests: samples.latencies.length,
          errors: samples.errors,
          errorExamples: samples.errorExamples,
          rps: samples.latencies.length / (samples.windowMs / 1000),
          latencyMs: summarize(samples.latencies),
          firstByteMs: summarize(samples.ttfb),
          serverCpu,
        };
        rows.push(row);
        console.error(`${scenario.name} / ${target}: ${fmt(row.rps)} req/s, p99 ${fmt(row.latencyMs.p99)} ms, errors ${row.errors}`);
        if (row.serverCpu !== undefined && row.serverCpu < 0.85) {
          console.error(`  note: the ${target} process used ${Math.round(row.serverCpu * 100)}% of its core: the load generator, not the server, set this rate`);
        }
      }
    }
  } finally {
    await router.stop();
    await engine.stop();
  }
  const facts = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit: gitCommit(),
    pinned: pinned ? 'router on core 0; engine and load generator on core 1' : 'no (taskset unavailable)',
    date: new Date().toISOString(),
    options,
  };
  const table = markdown(rows, facts);
  mkdirSync(options.out, { recursive: true });
  const stamp = facts.date.replace(/[:.]/g, '-');
  writeFileSync(join(options.out, `bench-${stamp}.json`), JSON.stringify({ facts, rows }, null, 2));
  writeFileSync(join(options.out, `bench-${stamp}.md`), `${table}\n`);
  console.log(table);
  return rows.some((r) => r.errors > 0) ? 1 : 0;
}


if (process.argv[1] === fileURLToPath(import.meta.url)) {
  bench(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}

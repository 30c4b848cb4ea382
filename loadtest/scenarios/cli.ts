/**
 * `npm run bench -- <scenario>` / `npm run bench -- <scenario>`: runs one
 * harness scenario, or `all` of them. Every scenario measures its baselines
 * in the same run, prints a Markdown report with a pass/fail verdict, and
 * writes JSON, Markdown and SVG charts under loadtest/results/.
 * `all --docs` regenerates docs/benchmarks.md and its charts from the run.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_OUT, failedBars } from './results.ts';

/** One scenario: how to run it and what it is, for the usage text and the docs. */
interface ScenarioEntry {
  readonly name: string;
  readonly title: string;
  /** What it does and what its verdict checks, for docs/benchmarks.md. */
  readonly about: string;
  run(argv: readonly string[]): Promise<number>;
}

const SCENARIOS: readonly ScenarioEntry[] = [
  {
    name: 'proxy-overhead',
    title: 'Proxy overhead: switchyard vs the engine directly, nginx and the vLLM router',
    about:
      'One engine simulator; nginx, switchyard and the vLLM project router each pinned to core 0, the engine and the load generator on core 1. Closed-loop throughput of small non-streamed chat at rising concurrency; open-loop latency at fractions of the router\'s measured maximum; 1,000 long streams arriving over 2 s for time to first token; then every system again over the static engine (nginx answering at once, so the shared core stays mostly idle), with a bare `node:http` + undici forwarder beside them (the floor a Node proxy shows on the machine), for interleaved open-loop runs (5 in a full run) at 50% of the router\'s maximum, the p99 bar (`--before DIR` measures another checkout of switchyard, an earlier commit, beside them in every part); every row reports the client core\'s use, TCP retransmits and the CPU the hypervisor stole from the machine during the run. Bars: ≥ 0.45× nginx requests/s; added p99 ≤ 2 ms over direct at 50% load; streaming TTFT p50 and p99 ≤ 1.2× nginx.',
    run: async (argv) => (await import('./proxy-overhead.ts')).proxyOverhead(argv),
  },
  {
    name: 'cpu-per-request',
    title: 'CPU per request: switchyard vs nginx, the vLLM router and a bare Node forwarder',
    about:
      "Small non-streamed chat from `ab -c 64`, with keep-alive and with a new connection per request, against one engine simulator; nginx, switchyard (default policy and round-robin), the vLLM project router and a bare `node:http` + undici forwarder (the floor Node allows, with the process settings `switchyard serve` makes) each pinned to core 0, ab and the engine on core 1; rounds interleaved, medians with their spread. A new connection's extra cost is also measured at an equal offered rate (the load generator in open loop at 2,000 requests a second, new or reused connections) for switchyard and the bare forwarder, because under ab's closed loop a slower proxy leaves ab asleep more often and each wake-up costs the waker more on this machine. `--breakdown DIR` adds where switchyard's CPU goes by stage, beside the bare forwarder's; `--before DIR` measures another checkout of switchyard (an earlier commit) in the same rounds. Bars: keep-alive CPU per request ≤ 1.1× vllm-router; the default policy ≤ 5 µs over round-robin; a new connection's extra cost at an equal rate ≤ 1.2× the bare forwarder's.",
    run: async (argv) => (await import('./cpu-per-request.ts')).cpuPerRequest(argv),
  },
  {
    name: 'tool-call-integrity',
    title: 'Tool-call integrity at ≥ 800 requests/s',
    about:
      'The seed report: 200 users, chat requests offering a tool answered with > 1 KiB arguments, half streamed, ramping to 900 requests/s through one router over two engines that split their writes at random bytes, until 100,000 requests were checked. Bars: zero malformed or interleaved payloads, zero other failures, ≥ 100,000 checked, ≥ 800 requests/s after the ramp.',
    run: async (argv) => (await import('./tool-call-integrity.ts')).toolCallIntegrity(argv),
  },
  {
    name: 'burst-concurrency',
    title: 'Burst concurrency: 10,000 at 2,000, then 10,000 open streams',
    about:
      'The `ab -n 10000 -c 2000` report through one router, then as many concurrent long-lived streams as one process can hold here (10,000 asked), with `/livez` sampled every 50 ms from its own process. Bars: no resets or errors, all streams open at once and complete, router RSS < 1 GiB, `/livez` answered throughout.',
    run: async (argv) => (await import('./burst-concurrency.ts')).burstConcurrency(argv),
  },
  {
    name: 'overload',
    title: 'Overload: 3× fleet capacity',
    about: "Small slow engines (4/4/64 slots, ~1 s per request) and a fast one (16 slots, ~110 ms) offered three times what they serve through a router with its default admission, and with the fixed settings it replaced for contrast; then the crash report's 10,000-request burst against engines that drain it in ~16 s, with the defaults and with shedding at once, and 3,000 new connections in a second. Bars from the admission issues, on the defaults: engines ≥ 95% busy, engine-side TTFT p99 within 2× unloaded, client-side TTFT p99 within the router queue's deadline, excess answered 429 at once, no 5xx or resets, the burst served whole, `/livez` unaffected.",
    run: async (argv) => (await import('./overload.ts')).overload(argv),
  },
  {
    name: 'routing-quality',
    title: 'Routing quality: policies on a heterogeneous fleet',
    about: 'Four engines of different sizes and speeds at 85% of measured capacity, the same Poisson arrivals replayed per policy. Bar: least-load p99 TTFT below round-robin without shedding more.',
    run: async (argv) => (await import('./routing-quality.ts')).routingQuality(argv),
  },
  {
    name: 'lora',
    title: 'LoRA: adapter-aware scheduling against least-load',
    about: 'Four engines with two adapter slots each (a swap-in costs 150 ms) serve eight adapters of Zipf popularity; the same Poisson arrivals through a fresh router per policy at 70% and 110% of what the engines serve without swaps, 3 interleaved rounds. Bars (medians): adapter swaps per 1,000 requests ≤ 0.3× and TTFT p99 ≤ 0.7× least-load, without shedding more.',
    run: async (argv) => (await import('./lora.ts')).lora(argv),
  },
  {
    name: 'large-prompts',
    title: 'Large prompts: 200 KB bodies at rising concurrency',
    about: 'Streaming chat with a 200 KB prompt through each proxy (pinned to core 0) vs the engine directly, with the bare `node:http` + undici forwarder (which reads each body before it forwards, as a router must) as the floor Node allows. Reports the time to first token each proxy adds and its CPU per request against the bare forwarder\'s; `--cpu-prof DIR` profiles the router and the forwarder; `--before DIR` measures another checkout of switchyard (an earlier commit) beside them. Bar: switchyard TTFT p50 ≤ 1.2× nginx at each concurrency.',
    run: async (argv) => (await import('./large-prompts.ts')).largePrompts(argv),
  },
  {
    name: 'replicas',
    title: 'Replicas: several routers behind one spreader',
    about: '1, 2 and 3 router processes behind nginx round-robin over the same four engines at 50% load, every request part of one of 400 conversations. Bars: no failures; replicas keep conversations on one engine as well as a single router does (no shared state needed for that: every replica hashes the same endpoint set).',
    run: async (argv) => (await import('./replicas.ts')).replicas(argv),
  },
  {
    name: 'memory-limit',
    title: 'Memory limit: 1 GiB cgroup under body floods, idle sockets and open streams',
    about:
      'One router at its defaults (`--max-old-space-size=384`, as the Helm chart runs it) in a memory cgroup of 1 GiB without swap, under 10,000 idle keep-alive sockets, then 8,000 open streams, then 40 connections flooding 33 MB bodies (declared and chunked, fast and slow), all at once; scaled to the open-file limit where it cannot be raised, with the named mix projected from the measured cost per socket and stream. Bars: peak charge (socket buffers included) under the limit, no OOM kill, the router alive, `/livez` answered throughout, no stream failed, idle sockets held, every flood body answered with a status, buffered bodies within the budget.',
    run: async (argv) => (await import('./memory-limit.ts')).memoryLimit(argv),
  },
  {
    name: 'cold-start',
    title: 'Cold start: a burst at routers that know nothing yet',
    about:
      'Routers started cold with no capacity configured, hit at once by 2,000 closed-loop clients sending 10,000 small non-streamed requests (`ab -n 10000 -c 2000`) against three 8-slot engines; 1 router and 3 behind nginx round-robin, without and with a router queue (2,000 long, 60 s deadline: the burst keeps ~25 s of work queued), and the same with the true capacity configured. The queued runs again with the replicas sharing one real Redis (emptied before each run; the burst starts once every replica reports it up), capacity unknown and configured; and capacity unknown with every client sending its own `x-session-id`, without and with Redis. Engine queues sampled every 100 ms; session moves as the routers counted them beside the engine changes the engines recorded. Then 8,000 long streams arriving over 3 s through one router to engines with room for all. Bars: every engine\'s `num_requests_waiting` ≤ `admission.maxWaiting` in every sample from the first request on, with 1 and 3 replicas (capacity unknown, and every Redis run); the queued backlog served (capacity unknown); zero 5xx and resets; no 429 for event-loop lag; `/livez` answered throughout; every engine fully busy within 3 scrape intervals (queued runs, capacity unknown or Redis); every replica reporting Redis up before the burst; 3 replicas with Redis serving ≥ 99% of what 1 served; with session keys, every engine change a counted move and every move off a saturated engine (Redis), every request off its key\'s engine a counted spill (without); the stream ramp served whole.',
    run: async (argv) => (await import('./cold-start.ts')).coldStart(argv),
  },
  {
    name: 'prefix-affinity',
    title: 'Prefix affinity: keyless traffic routed to the engines\' prefix caches',
    about:
      'Eight engine simulators (24 slots, a 384k-token LRU prefix cache, 12k tokens/s prefill) under four seeded workloads: A keyless multi-turn chat resending its history, B users over 150 shared 6k-token documents, C one shared system prompt, D no reuse; at 70% and 120% of least-load\'s capacity (probed per workload), through switchyard round-robin, least-load and prefix-affinity (1 router, and 3 behind nginx round-robin), an oracle routing on the engines\' true caches, and the `cache_aware` policies of vllm-router and SGLang\'s smg (A and B at 70%; nothing sheds at 70%, switchyard and the oracle shed at 5 waiting at 120%). Reports the engines\' token-weighted prefix hit ratio, TTFT, served/shed/failed, batch balance and per-core CPU. Bars: A hit ratio ≥ 0.85 at 1 and 3 replicas with least-load ≤ 0.6; TTFT p99 ≤ 0.5× least-load on A and B, ≤ 1.1× on D; C time-averaged max/mean running ≤ 1.5.',
    run: async (argv) => (await import('./prefix-affinity.ts')).prefixAffinity(argv),
  },
  {
    name: 'shared-state',
    title: 'Shared state: replicas that agree through Redis',
    about:
      'Three router replicas behind nginx round-robin (and one alone) over four engines of unequal capacity (4, 8, 8 and 16 slots), at 50% and 85% of their capacity, the same runs with and without a real redis-server started by the scenario. Conversations (`x-session-id`) at 50% with a fifth engine joining halfway; at 85% without Redis, with Redis, and with Redis killed, restarted empty and paused (SIGSTOP) mid-run; keyless least-load streams at 85% through one router and three, in interleaved rounds; one API key limited to 50 req/s offering 100 req/s through three replicas, with Redis and with Redis down; what Redis costs per request. Bars: ≥ 99.5% of conversations on one engine with Redis at one and three replicas, the join included; every conversation that changed engine at 85% is a move the routers counted; three replicas\' time-averaged engine waiting (max ÷ mean) and TTFT p99 within 10% of one router (median of rounds); 50 ± 5 req/s admitted with Redis, ≤ 50 degraded; through the outage zero 5xx, resets or broken streams, 429s within 5% of the run without Redis, and every replica back up and agreeing on the fleet within the run. A feature the routers lack shows as a failed bar that says so.',
    run: async (argv) => (await import('./shared-state.ts')).sharedState(argv),
  },
];

const USAGE = `Usage: npm run bench -- <scenario> [--quick | --smoke] [--quiet] [--out DIR] [--generators N] [scenario flags]
       switchyard bench all [--quick | --smoke] [--docs]
       switchyard bench docs DIR    (docs/benchmarks.md from the results in DIR)

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(20)} ${s.title}`).join('\n')}
  ${'all'.padEnd(20)} every scenario in turn; --docs regenerates docs/benchmarks.md from the run

--quick runs shorter versions (minutes); --smoke runs seconds-long versions that
judge correctness only (CI). Results: JSON, Markdown and SVG charts in --out
(default loadtest/results/).
`;

const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

/** Runs every scenario into one folder; with `--docs`, rewrites docs/benchmarks.md from it. */
async function runAll(argv: readonly string[]): Promise<number> {
  const docs = argv.includes('--docs');
  const passThrough = argv.filter((a) => a !== '--docs');
  const outIndex = passThrough.indexOf('--out');
  const out = outIndex >= 0 ? (passThrough[outIndex + 1] as string) : join(DEFAULT_OUT, `all-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const args = outIndex >= 0 ? passThrough : [...passThrough, '--out', out];
  const outcomes: { name: string; code: number; seconds: number; startedAt: number }[] = [];
  for (const scenario of SCENARIOS) {
    console.error(`\n== ${scenario.name}`);
    const startedAt = Date.now();
    let code: number;
    try {
      code = await scenario.run(args);
    } catch (err) {
      console.error(err);
      code = 1;
    }
    outcomes.push({ name: scenario.name, code, seconds: (Date.now() - startedAt) / 1000, startedAt });
  }
  console.error(`\n${outcomes.map((o) => `${o.name}: ${o.code === 0 ? 'PASS' : 'FAIL'} (${o.seconds.toFixed(0)} s)${o.code === 0 ? '' : failedBarsOf(out, o.name, o.startedAt)}`).join('\n')}`);
  if (docs) writeDocs(out, passThrough.filter((a, i) => a !== '--out' && passThrough[i - 1] !== '--out'), outcomes);
  return outcomes.every((o) => o.code === 0) ? 0 : 1;
}

/** A failed scenario's failed bars, one indented line each, read back from the results it wrote to `out` since `since` (epoch ms). */
function failedBarsOf(out: string, scenario: string, since: number): string {
  const file = join(out, `${scenario}-latest.md`);
  if (!existsSync(file) || statSync(file).mtimeMs < since) return '\n  (it wrote no results: its error is above)';
  return failedBars(readFileSync(file, 'utf8')).map((bar) => `\n  failed: ${bar}`).join('');
}

/** Outcome of one scenario run, as `all` saw it. */
interface Outcome {
  readonly name: string;
  readonly code: number;
  /** Undefined when read back from a results folder. */
  readonly seconds: number | undefined;
}

/**
 * docs/benchmarks.md and docs/benchmarks/*.svg from the results in `out`
 * (`all --docs`, or `docs DIR` after rerunning one scenario into DIR).
 */
function writeDocs(out: string, args: readonly string[], outcomes: readonly Outcome[]): void {
  const charts = join(DOCS, 'benchmarks');
  mkdirSync(charts, { recursive: true });
  const files = readdirSync(out);
  const previous = previousSections();
  const rerun = (name: string) => outcomes.some((o) => o.name === name);
  const partial = outcomes.length < SCENARIOS.length;
  const sections = SCENARIOS.flatMap((scenario) => {
    const kept = previous.get(`## ${scenario.title}`);
    // `docs DIR` after rerunning some scenarios: the others keep the section of their last run (or stay out).
    if (partial && !rerun(scenario.name)) return kept === undefined ? [] : [kept];
    const latest = files.includes(`${scenario.name}-latest.md`) ? readFileSync(join(out, `${scenario.name}-latest.md`), 'utf8').trim() : '_No result: the scenario did not finish._';
    const svgs = files.filter((f) => f.startsWith(`${scenario.name}-`) && f.endsWith('.svg')).sort();
    for (const svg of svgs) copyFileSync(join(out, svg), join(charts, svg));
    const outcome = outcomes.find((o) => o.name === scenario.name);
    const section = [
      `## ${scenario.title}`,
      '',
      `\`npm run bench -- ${scenario.name}\`${outcome === undefined ? '' : ` (${outcome.code === 0 ? 'PASS' : 'FAIL'}${outcome.seconds === undefined ? '' : `, ${outcome.seconds.toFixed(0)} s`})`}`,
      '',
      scenario.about,
      '',
      latest.replace(/^#{1,3} /gm, '#### '),
      ...svgs.map((svg) => `\n![${svg}](benchmarks/${svg})`),
    ].join('\n');
    return [section];
  });
  const text = [
    '# Benchmarks',
    '',
    'Generated by `npm run bench -- all --docs` from one run of every scenario in `loadtest/` (do not edit by hand; the reading of these numbers is in [performance.md](performance.md)). Each scenario measures its baselines (the engine directly, nginx, the vLLM project router where it installs) in the same run, on the machine named in its header. Rerun any one with the command under its heading; `--quick` gives a shorter version. Latency is from the scheduled send time in open-loop runs, so a stalled target is charged for the requests it kept waiting; every row says whether the load generator kept up.',
    '',
    runLine(args, outcomes, previous.get('Run:')),
    '',
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
  writeFileSync(join(DOCS, 'benchmarks.md'), text);
  console.error(`wrote ${join(DOCS, 'benchmarks.md')}`);
}

/** The sections of the current docs/benchmarks.md by their `## title` line (none when it does not exist). */
function previousSections(): Map<string, string> {
  const file = join(DOCS, 'benchmarks.md');
  const sections = new Map<string, string>();
  if (!existsSync(file)) return sections;
  const parts = readFileSync(file, 'utf8').split(/^(?=## )/m).slice(1);
  for (const part of parts) sections.set(part.slice(0, part.indexOf('\n')), part.trimEnd());
  const run = /^Run: .*$/m.exec(readFileSync(file, 'utf8'));
  if (run !== null) sections.set('Run:', run[0]);
  return sections;
}

/** The `Run:` line: the `all` command, or after `docs DIR` the earlier line and which scenarios were rerun since. */
function runLine(args: readonly string[], outcomes: readonly Outcome[], previous: string | undefined): string {
  if (previous === undefined || outcomes.length === SCENARIOS.length) return `Run: \`${['npm run bench -- all', ...args, '--docs'].join(' ')}\``;
  // Sections rerun before this one keep saying so: the line names every scenario rerun since the whole run.
  const rerun = (name: string) => outcomes.some((o) => o.name === name) || previous.includes(`\`npm run bench -- ${name}\``);
  const names = SCENARIOS.map((scenario) => scenario.name).filter(rerun);
  return `${previous.replace(/ Rerun since:.*$/, '')} Rerun since: ${names.map((name) => `\`npm run bench -- ${name}\``).join(', ')} (their sections).`;
}

/** Entry point; returns the exit code. */
export async function bench(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === 'all') return runAll(rest);
  if (name === 'docs' && rest[0] !== undefined) {
    // After rerunning one scenario into a folder of an earlier `all` run.
    const dir = rest[0];
    const outcomes = SCENARIOS.flatMap((scenario) => {
      const file = join(dir, `${scenario.name}-latest.md`);
      if (!existsSync(file)) return [];
      return [{ name: scenario.name, code: /Verdict: \**PASS/.test(readFileSync(file, 'utf8')) ? 0 : 1, seconds: undefined }];
    });
    writeDocs(dir, [], outcomes);
    return 0;
  }
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (scenario === undefined) {
    console.log(USAGE);
    return name === undefined || name === '--help' || name === '-h' ? 0 : 2;
  }
  return scenario.run(rest);
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

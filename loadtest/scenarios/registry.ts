/**
 * The benchmark scenarios `npm run bench` knows: what each one is (for the
 * usage text, its `--help` and docs/benchmarks.md), the options it takes, and
 * how to run it. Each scenario's option list is the one source its `--help`
 * text and its parser (results.ts `scenarioOptions`) are both built from, so
 * the two cannot disagree; a scenario that reads an option its list lacks does
 * not type-check. Scenario modules load on demand, so `--help` and the usage
 * text start no engine and load no load generator.
 */

/** One command-line option: how `--help` shows it and how the parser takes it. */
export interface OptionSpec {
  /** Without the leading `--`. */
  readonly name: string;
  /** Placeholder for its value in the help (`N`, `DIR`); absent for a flag that takes no value. */
  readonly value?: string;
  /** One line: what it does and its default. */
  readonly description: string;
}

/** Options every scenario takes (results.ts `CommonOptions`). */
export const COMMON_OPTIONS = [
  { name: 'quick', description: 'shorter runs (minutes): indicative only, too short to compare policies or judge speed bars reliably' },
  { name: 'smoke', description: 'seconds-long runs that check correctness only; speed and comparison bars are reported, not judged (CI)' },
  { name: 'quiet', description: 'no live progress line' },
  { name: 'out', value: 'DIR', description: 'where the JSON, Markdown and SVG results go (default loadtest/results/)' },
  { name: 'generators', value: 'N', description: "load-generator processes (default: the scenario's own)" },
] as const satisfies readonly OptionSpec[];

/** The name of a common option. */
export type CommonOptionName = (typeof COMMON_OPTIONS)[number]['name'];

const PEER = { name: 'peer', value: 'off', description: 'leave out the vLLM project router (measured beside switchyard by default)' } as const;
const BEFORE = { name: 'before', value: 'DIR', description: 'also measure the switchyard checkout in DIR (a worktree of an earlier commit, `npm ci` done there) in the same rounds' } as const;

/** Each scenario's own options, after the common ones; keys are the scenario names. */
const SCENARIO_OPTIONS = {
  'proxy-overhead': [PEER, { name: 'cpu-prof', value: 'DIR', description: "write the router's CPU profiles to DIR, one per router process, when it stops" }, BEFORE],
  'cpu-per-request': [
    PEER,
    { name: 'breakdown', value: 'DIR', description: "add profiled runs (profiles in DIR) and report where switchyard's and the bare forwarder's CPU goes by stage" },
    BEFORE,
    { name: 'access-log', value: 'json|text', description: 'add switchyard with its access log on in this format to the same rounds' },
    { name: 'tracing', value: 'RATIOS', description: 'add switchyard with OpenTelemetry tracing at each sampling ratio (comma-separated, e.g. 0.01,1)' },
  ],
  'tool-call-integrity': [
    { name: 'requests', value: 'N', description: 'requests to send and check (default 100,000; quick 20,000; smoke 2,000); the checked bar is this count' },
    { name: 'rate', value: 'N', description: 'requests/s the ramp ends at (default 900; smoke 400); the throughput bar is 8/9 of it (800 of 900)' },
  ],
  'burst-concurrency': [{ name: 'streams', value: 'N', description: 'long-lived streams to hold open at once (default 10,000; smoke 500), fewer where the open-file limit cannot fit them' }],
  overload: [
    { name: 'duration-s', value: 'N', description: 'measured seconds of each 3× run (default 60; quick 8; smoke 2)' },
    { name: 'only', value: 'LIST', description: 'run only these parts, comma-separated of slow,fast,burst: logged, not judged, no report written' },
  ],
  'routing-quality': [
    { name: 'duration-s', value: 'N', description: 'measured seconds per policy (default 20; quick and smoke 3)' },
    { name: 'warmup-s', value: 'N', description: 'unmeasured seconds before that, so the router learns capacities (default 5; quick and smoke 2)' },
    { name: 'load', value: 'F', description: 'offered rate as a share of measured fleet capacity (default 0.85)' },
    { name: 'rate', value: 'N', description: 'offered rate in requests/s (overrides --load)' },
    { name: 'sessions', value: 'N', description: 'distinct conversations (default 40)' },
    { name: 'session-share', value: 'F', description: 'share of requests that carry a session key (default 0.5)' },
    { name: 'seed', value: 'N', description: 'arrival schedule seed (default 1)' },
    { name: 'policies', value: 'LIST', description: 'comma-separated routing policies (default round-robin,least-load,session)' },
    { name: 'router-args', value: '"ARGS"', description: 'extra router flags, space-separated (e.g. "--admission-queue-length 1000")' },
  ],
  lora: [{ name: 'rounds', value: 'N', description: 'interleaved rounds (default 3; quick and smoke 1); the bars take the median of the rounds' }],
  'large-prompts': [PEER, { name: 'cpu-prof', value: 'DIR', description: 'write the CPU profiles of the router and the bare forwarder to DIR when they stop' }, BEFORE],
  replicas: [],
  'memory-limit': [
    { name: 'limit-mib', value: 'N', description: "the memory cgroup's limit in MiB (default 1024)" },
    { name: 'heap-mib', value: 'N', description: "the router's --max-old-space-size in MiB (default 384, as the Helm chart sets it)" },
    { name: 'budget-mib', value: 'N', description: "the router's body budget in MiB, --server-body-budget-bytes (default 128)" },
    { name: 'idle', value: 'N', description: 'idle keep-alive sockets (default 10,000; smoke 200), scaled to the open-file limit' },
    { name: 'streams', value: 'N', description: 'open streams (default 8,000; smoke 100), scaled to the open-file limit' },
    { name: 'floods', value: 'N', description: 'connections flooding 33 MB bodies (default 40; smoke 8)' },
    { name: 'flood-s', value: 'S', description: 'seconds the floods last (default 60; quick 20; smoke 3)' },
  ],
  'cold-start': [],
  'prefix-affinity': [
    { name: 'workloads', value: 'LIST', description: 'comma-separated of A,B,C,D,E (default: all; smoke A)' },
    { name: 'routers', value: 'LIST', description: 'comma-separated of round-robin,least-load,least-load-redis,prefix-affinity,prefix-affinity-redis,oracle,vllm-router,smg (default: all; a -redis name runs at 3 replicas sharing one redis-server)' },
    { name: 'replicas', value: 'LIST', description: 'router processes behind nginx (default 1,3; round-robin and the oracle run at 1 only)' },
    { name: 'loads', value: 'LIST', description: "shares of least-load's capacity (default 0.7,1.2; peers run at loads ≤ 1 on A and B)" },
    { name: 'duration-s', value: 'N', description: 'measured seconds per row (default 30; quick 12; smoke 4)' },
    { name: 'warmup-s', value: 'N', description: 'unmeasured seconds before that (default 20; quick 12; smoke 3)' },
    { name: 'rounds', value: 'N', description: 'interleaved rounds, each with its own arrivals (default 3; quick and smoke 1); the bars take the median of the rounds' },
    { name: 'seed', value: 'N', description: 'workload and arrival seed (default 1)' },
  ],
  'shared-state': [],
} as const satisfies Record<string, readonly OptionSpec[]>;

/** A scenario's name, as `npm run bench -- NAME` takes it. */
export type ScenarioName = keyof typeof SCENARIO_OPTIONS;
/** The name of one of scenario `N`'s own options. */
export type OptionName<N extends ScenarioName> = (typeof SCENARIO_OPTIONS)[N][number]['name'];

/** One scenario: how to run it and what it is, for the usage text, its `--help` and the docs. */
export interface ScenarioEntry {
  readonly name: ScenarioName;
  readonly title: string;
  /** What it does and what its verdict checks, for `--help` and docs/benchmarks.md. */
  readonly about: string;
  /** Its own options, after {@link COMMON_OPTIONS}. */
  readonly options: readonly OptionSpec[];
  /** Common options it takes but has no use for (its load comes from its own process, or it never draws a progress line). */
  readonly ignores: readonly CommonOptionName[];
  run(argv: readonly string[]): Promise<number>;
}

/** An entry with its options from {@link SCENARIO_OPTIONS}, so the two lists cannot fall apart. */
function scenario(name: ScenarioName, entry: Omit<ScenarioEntry, 'name' | 'options' | 'ignores'> & { readonly ignores?: readonly CommonOptionName[] }): ScenarioEntry {
  return { name, options: SCENARIO_OPTIONS[name], ignores: [], ...entry };
}

/** Every scenario, in the order `all` runs them and docs/benchmarks.md shows them. */
export const SCENARIOS: readonly ScenarioEntry[] = [
  scenario('proxy-overhead', {
    title: 'Proxy overhead: switchyard vs the engine directly, nginx and the vLLM router',
    about:
      'One engine simulator; nginx, switchyard and the vLLM project router each pinned to core 0, the engine and the load generator on core 1. Closed-loop throughput of small non-streamed chat at rising concurrency; open-loop latency at fractions of the router\'s measured maximum; 1,000 long streams arriving over 2 s for time to first token; then every system again over the static engine (nginx answering at once, so the shared core stays mostly idle), with a bare `node:http` + undici forwarder beside them (the floor a Node proxy shows on the machine), for interleaved open-loop runs (5 in a full run) at 50% of the router\'s maximum, the p99 bar (`--before DIR` measures another checkout of switchyard, an earlier commit, beside them in every part); every row reports the client core\'s use, TCP retransmits and the CPU the hypervisor stole from the machine during the run. Bars: ≥ 0.45× nginx requests/s; added p99 ≤ 2 ms over direct at 50% load; streaming TTFT p50 and p99 ≤ 1.2× nginx.',
    run: async (argv) => (await import('./proxy-overhead.ts')).proxyOverhead(argv),
  }),
  scenario('cpu-per-request', {
    title: 'CPU per request: switchyard vs nginx, the vLLM router and a bare Node forwarder',
    about:
      "Small non-streamed chat from `ab -c 64`, with keep-alive and with a new connection per request, against one engine simulator; nginx, switchyard (default policy and round-robin), the vLLM project router and a bare `node:http` + undici forwarder (the floor Node allows, with the process settings `switchyard serve` makes) each pinned to core 0, ab and the engine on core 1; rounds interleaved, medians with their spread. A new connection's extra cost is also measured at an equal offered rate (the load generator in open loop at 2,000 requests a second, new or reused connections) for switchyard and the bare forwarder, because under ab's closed loop a slower proxy leaves ab asleep more often and each wake-up costs the waker more on this machine. `--breakdown DIR` adds where switchyard's CPU goes by stage, beside the bare forwarder's; `--before DIR` measures another checkout of switchyard (an earlier commit) in the same rounds. Bars: keep-alive CPU per request ≤ 1.1× vllm-router; the default policy ≤ 5 µs over round-robin; a new connection's extra cost at an equal rate ≤ 1.2× the bare forwarder's.",
    // ab makes the load; the equal-rate runs use one quiet generator process.
    ignores: ['generators', 'quiet'],
    run: async (argv) => (await import('./cpu-per-request.ts')).cpuPerRequest(argv),
  }),
  scenario('tool-call-integrity', {
    title: 'Tool-call integrity at ≥ 800 requests/s',
    about:
      'The seed report: 200 users, chat requests offering a tool answered with > 1 KiB arguments, half streamed, ramping to 900 requests/s through one router over two engines that split their writes at random bytes, until 100,000 requests were checked. Bars: zero malformed or interleaved payloads, zero other failures, ≥ 100,000 checked, ≥ 800 requests/s after the ramp (with `--requests` and `--rate`: the count asked for, and 8/9 of the rate asked for).',
    run: async (argv) => (await import('./tool-call-integrity.ts')).toolCallIntegrity(argv),
  }),
  scenario('burst-concurrency', {
    title: 'Burst concurrency: 10,000 at 2,000, then 10,000 open streams',
    about:
      'The `ab -n 10000 -c 2000` report through one router, then as many concurrent long-lived streams as one process can hold here (10,000 asked), with `/livez` sampled every 50 ms from its own process. Bars: no resets or errors, all streams open at once and complete, router RSS < 1 GiB, `/livez` answered throughout.',
    run: async (argv) => (await import('./burst-concurrency.ts')).burstConcurrency(argv),
  }),
  scenario('overload', {
    title: 'Overload: 3× fleet capacity',
    about:
      "Small slow engines (4/4/64 slots, ~1 s per request) and a fast one (16 slots, ~110 ms) offered three times what they serve through a router with its default admission, and with the fixed settings it replaced for contrast; then the crash report's 10,000-request burst against engines that drain it in ~16 s, with the defaults and with shedding at once, and 3,000 new connections in a second. Bars from the admission issues, on the defaults: engines ≥ 95% busy, engine-side TTFT p99 within 2× unloaded, client-side TTFT p99 within the router queue's deadline, excess answered 429 at once, no 5xx or resets, the burst served whole, `/livez` unaffected.",
    // The engines and the clients share this process; it prints one line per run.
    ignores: ['generators', 'quiet'],
    run: async (argv) => (await import('./overload.ts')).overload(argv),
  }),
  scenario('routing-quality', {
    title: 'Routing quality: policies on a heterogeneous fleet',
    about:
      'Four engines of different sizes and speeds at 85% of measured capacity, the same Poisson arrivals replayed per policy. Bar: least-load p99 TTFT below round-robin without shedding more (judged in full runs only: a quick run is too short to compare policies). Chart: TTFT percentiles per policy.',
    // The engines and the clients share this process; it prints one line per policy.
    ignores: ['generators', 'quiet'],
    run: async (argv) => (await import('./routing-quality.ts')).routingQuality(argv),
  }),
  scenario('lora', {
    title: 'LoRA: adapter-aware scheduling against least-load',
    about:
      'Four engines with two adapter slots each (a swap-in costs 150 ms) serve eight adapters of Zipf popularity; the same Poisson arrivals through a fresh router per policy at 70% and 110% of what the engines serve without swaps, 3 interleaved rounds. Bars (medians): adapter swaps per 1,000 requests ≤ 0.3× and TTFT p99 ≤ 0.7× least-load, without shedding more.',
    // The engines and the clients share this process; it prints one line per run.
    ignores: ['generators', 'quiet'],
    run: async (argv) => (await import('./lora.ts')).lora(argv),
  }),
  scenario('large-prompts', {
    title: 'Large prompts: 200 KB bodies at rising concurrency',
    about:
      "Streaming chat with a 200 KB prompt through each proxy (pinned to core 0) vs the engine directly, with the bare `node:http` + undici forwarder (which reads each body before it forwards, as a router must) as the floor Node allows. Reports the time to first token each proxy adds and its CPU per request against the bare forwarder's; `--cpu-prof DIR` profiles the router and the forwarder; `--before DIR` measures another checkout of switchyard (an earlier commit) beside them. Bar: switchyard TTFT p50 ≤ 1.2× nginx at each concurrency.",
    run: async (argv) => (await import('./large-prompts.ts')).largePrompts(argv),
  }),
  scenario('replicas', {
    title: 'Replicas: several routers behind one spreader',
    about:
      '1, 2 and 3 router processes behind nginx round-robin over the same four engines at 50% load, every request part of one of 400 conversations. Bars: no failures; replicas keep conversations on one engine as well as a single router does (no shared state needed for that: every replica hashes the same endpoint set).',
    run: async (argv) => (await import('./replicas.ts')).replicas(argv),
  }),
  scenario('memory-limit', {
    title: 'Memory limit: 1 GiB cgroup under body floods, idle sockets and open streams',
    about:
      'One router at its defaults (`--max-old-space-size=384`, as the Helm chart runs it) in a memory cgroup of 1 GiB without swap, under 10,000 idle keep-alive sockets, then 8,000 open streams, then 40 connections flooding 33 MB bodies (declared and chunked, fast and slow), all at once; scaled to the open-file limit where it cannot be raised, with the named mix projected from the measured cost per socket and stream. Bars: peak charge (socket buffers included) under the limit, no OOM kill, the router alive, `/livez` answered throughout, no stream failed, idle sockets held, every flood body answered with a status, buffered bodies within the budget.',
    run: async (argv) => (await import('./memory-limit.ts')).memoryLimit(argv),
  }),
  scenario('cold-start', {
    title: 'Cold start: a burst at routers that know nothing yet',
    about:
      "Routers started cold with no capacity configured, hit at once by 2,000 closed-loop clients sending 10,000 small non-streamed requests (`ab -n 10000 -c 2000`) against three 8-slot engines; 1 router and 3 behind nginx round-robin, without and with a router queue (2,000 long, 60 s deadline: the burst keeps ~25 s of work queued), and the same with the true capacity configured. The queued runs again with the replicas sharing one real Redis (emptied before each run; the burst starts once every replica reports it up), capacity unknown and configured; and capacity unknown with every client sending its own `x-session-id`, without and with Redis. Engine queues sampled every 100 ms; session moves as the routers counted them beside the engine changes the engines recorded. Then 8,000 long streams arriving over 3 s through one router to engines with room for all. Bars: every engine's `num_requests_waiting` ≤ `admission.maxWaiting` in every sample from the first request on, with 1 and 3 replicas (capacity unknown, and every Redis run); the queued backlog served (capacity unknown); zero 5xx and resets; no 429 for event-loop lag; `/livez` answered throughout; every engine fully busy within 3 scrape intervals (queued runs, capacity unknown or Redis); every replica reporting Redis up before the burst; 3 replicas with Redis serving ≥ 99% of what 1 served; with session keys, every engine change a counted move and every move off a saturated engine (Redis), every request off its key's engine a counted spill (without); the stream ramp served whole.",
    // Its bursts use a fixed number of generator processes, so every run splits the clients alike.
    ignores: ['generators'],
    run: async (argv) => (await import('./cold-start.ts')).coldStart(argv),
  }),
  scenario('prefix-affinity', {
    title: "Prefix affinity: keyless traffic routed to the engines' prefix caches",
    about:
      "Eight engine simulators (24 slots, a 384k-token LRU prefix cache, 12k tokens/s prefill) under five seeded workloads: A keyless multi-turn chat resending its history, B users over 150 shared 6k-token documents, C one shared system prompt, D no reuse, E short prompts behind a short common prefix; at 70% and 120% of least-load's capacity (probed per workload), through switchyard round-robin, least-load and prefix-affinity (1 router, and 3 behind nginx round-robin, without and with a shared Redis), an oracle routing on the engines' true caches, and the `cache_aware` policies of vllm-router and SGLang's smg (A and B at 70%; nothing sheds at 70%, switchyard and the oracle shed at 5 waiting at 120%), in interleaved rounds (3 by default). Reports the engines' token-weighted prefix hit ratio, TTFT, served/shed/failed, batch balance and per-core CPU, each setup's median and range over the rounds. Bars on the medians: A hit ratio ≥ 0.85 at 1 and 3 replicas with least-load ≤ 0.6, TTFT p99 ≤ 0.5× least-load; B hit ratio ≥ 0.75, TTFT p99 ≤ 0.7× least-load at 70% and ≤ 1.0× at 120%; C time-averaged max/mean running ≤ 1.5; D and E TTFT p99 ≤ 1.1× least-load.",
    // The engines and the clients share this process; it prints one line per row.
    ignores: ['generators', 'quiet'],
    run: async (argv) => (await import('./prefix-affinity.ts')).prefixAffinity(argv),
  }),
  scenario('shared-state', {
    title: 'Shared state: replicas that agree through Redis',
    about:
      "Three router replicas behind nginx round-robin (and one alone) over four engines of unequal capacity (4, 8, 8 and 16 slots), at 50% and 85% of their capacity, the same runs with and without a real redis-server started by the scenario. Conversations (`x-session-id`) at 50% with a fifth engine joining halfway; at 85% without Redis, with Redis, and with Redis killed, restarted empty and paused (SIGSTOP) mid-run; keyless least-load streams at 85% through one router and three, in interleaved rounds; one API key limited to 50 req/s offering 100 req/s through three replicas, with Redis and with Redis down; what Redis costs per request. Bars: ≥ 99.5% of conversations on one engine with Redis at one and three replicas, the join included; every conversation that changed engine at 85% is a move the routers counted; three replicas' time-averaged engine waiting (max ÷ mean) and TTFT p99 within 10% of one router (median of rounds); 50 ± 5 req/s admitted with Redis, ≤ 50 degraded; through the outage zero 5xx, resets or broken streams, 429s within 5% of the run without Redis, and every replica back up and agreeing on the fleet within the run. A feature the routers lack shows as a failed bar that says so.",
    run: async (argv) => (await import('./shared-state.ts')).sharedState(argv),
  }),
];

/** The scenario called `name` (every {@link ScenarioName} has one: registry.test.ts checks). */
export function scenarioEntry(name: ScenarioName): ScenarioEntry {
  const entry = SCENARIOS.find((s) => s.name === name);
  if (entry === undefined) throw new Error(`no scenario ${name} in SCENARIOS`);
  return entry;
}

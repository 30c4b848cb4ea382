/**
 * `npm run bench -- prefix-affinity`: does routing keyless traffic by its
 * prompt prefix find the engines' prefix caches, and what does that do to
 * the time to first token? Eight simulated engines with a KV-block prefix
 * cache and a prefill cost per uncached token (prefix-runner.ts FLEET) take
 * four seeded workloads (prefix-workloads.ts: keyless multi-turn chat, shared
 * documents, one shared system prompt, no reuse) through switchyard's
 * round-robin, least-load and prefix-affinity policies (one router, and three
 * behind nginx round-robin), an oracle that routes on the engines' true cache
 * contents, and the `cache_aware` policies of the vLLM project's router and
 * SGLang's gateway (smg), at 70% and 120% of least-load's capacity.
 *
 * Admission is held equal: at loads up to capacity nothing sheds (switchyard
 * with saturation thresholds out of reach, the oracle unbounded), since the
 * peers have no admission to match, and the peers run only there (A and B);
 * past capacity switchyard and the oracle shed at 5 waiting (switchyard's
 * default). Every row reports served and shed counts either way.
 *
 * With `--rounds N` every row runs N times, round after round (so slow
 * drifts of the machine fall on every router alike), each round with its own
 * arrivals; the bars judge each setup's median, and the report shows the range.
 *
 *   npm run bench -- prefix-affinity [--quick | --smoke] [--workloads A,B] [--routers ...]
 *     [--replicas 1,3] [--loads 0.7,1.2] [--rounds N] [--duration-s N] [--warmup-s N] [--seed N] [--out DIR]
 */
import { BARS, judge, roundsTable, table, workloadLines, type LoadedRow } from './prefix-report.ts';
import { derivedCapacity, probedCapacity, type Capacity } from './prefix-capacity.ts';
import { FLEET } from './prefix-fleet.ts';
import { BUSY_CORE_LIMIT, runRow, type RowSpec } from './prefix-runner.ts';
import { isPeer, ROUTER_NAMES, sharesRedis, type RouterName } from './prefix-targets.ts';
import { WORKLOAD_NAMES, warmupMsFor, workload, type Workload, type WorkloadName } from './prefix-workloads.ts';
import { factsLine, pct, runFacts, runIfMain, scenarioOptions, writeResults } from './results.ts';

/** Durations (ms) and what runs, per mode. */
interface Plan {
  readonly workloads: readonly WorkloadName[];
  readonly routers: readonly RouterName[];
  readonly replicas: readonly number[];
  readonly loads: readonly number[];
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly drainMs: number;
  /** Probe least-load's capacity per workload (else assume no cache hits: prefix-capacity.ts). */
  readonly probe: boolean;
  /** Times every row runs, round after round. */
  readonly rounds: number;
}

const ALL_ROUTERS: readonly RouterName[] = ROUTER_NAMES;

/**
 * Full: A's conversations live ~25 s (12 turns of ~1 s plus ~1 s of think
 * time), so a 20 s warm-up brings the window close to steady state (a window
 * that starts earlier holds more first turns, which cannot hit). Quick keeps
 * the shape at under half the time; smoke (CI) checks one workload end to end.
 */
const PLANS: Readonly<Record<'full' | 'quick' | 'smoke', Plan>> = {
  full: { workloads: WORKLOAD_NAMES, routers: ALL_ROUTERS, replicas: [1, 3], loads: [0.7, 1.2], warmupMs: 20_000, durationMs: 30_000, drainMs: 60_000, probe: true, rounds: 3 },
  quick: { workloads: WORKLOAD_NAMES, routers: ALL_ROUTERS, replicas: [1, 3], loads: [0.7, 1.2], warmupMs: 12_000, durationMs: 12_000, drainMs: 60_000, probe: true, rounds: 1 },
  smoke: { workloads: ['A'], routers: ['least-load', 'prefix-affinity', 'oracle'], replicas: [1], loads: [0.7], warmupMs: 3_000, durationMs: 4_000, drainMs: 5_000, probe: false, rounds: 1 },
};

function list<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(',').filter((v) => v !== '');
  for (const item of items) if (!(allowed as readonly string[]).includes(item)) throw new Error(`--${flag}: unknown ${JSON.stringify(item)} (one of ${allowed.join(', ')})`);
  return items as T[];
}

function numbers(value: string | undefined, flag: string): number[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(',').filter((v) => v !== '').map(Number);
  if (items.length === 0 || items.some((n) => !(n > 0))) throw new Error(`--${flag}: expected positive numbers, got ${JSON.stringify(value)}`);
  return items;
}

/** Which rows run, in order: per workload and load, every router at every replica count it runs at. */
function rowsOf(plan: Plan, w: WorkloadName, load: number): { router: RouterName; replicas: number }[] {
  const out: { router: RouterName; replicas: number }[] = [];
  for (const replicas of plan.replicas) {
    for (const router of plan.routers) {
      // One oracle sees every engine's cache; round-robin through N round-robin routers is still round-robin.
      if ((router === 'oracle' || router === 'round-robin') && replicas !== plan.replicas[0]) continue;
      // One replica has nothing to share.
      if (sharesRedis(router) && replicas === 1) continue;
      if (isPeer(router) && (load > 1 || (w !== 'A' && w !== 'B'))) continue;
      out.push({ router, replicas });
    }
  }
  return out;
}

/** Entry point; returns the exit code. */
export async function prefixAffinity(argv: readonly string[]): Promise<number> {
  const options = scenarioOptions(argv, 'prefix-affinity');
  const base = PLANS[options.smoke ? 'smoke' : options.quick ? 'quick' : 'full'];
  const x = options.extra;
  const durationS = numbers(x['duration-s'], 'duration-s')?.[0];
  const warmupS = numbers(x['warmup-s'], 'warmup-s')?.[0];
  const plan: Plan = {
    ...base,
    workloads: list(x['workloads'], WORKLOAD_NAMES, 'workloads') ?? base.workloads,
    routers: list(x['routers'], ROUTER_NAMES, 'routers') ?? base.routers,
    replicas: numbers(x['replicas'], 'replicas')?.map(Math.round) ?? base.replicas,
    loads: numbers(x['loads'], 'loads') ?? base.loads,
    ...(durationS === undefined ? {} : { durationMs: durationS * 1000 }),
    ...(warmupS === undefined ? {} : { warmupMs: warmupS * 1000 }),
    rounds: Math.max(1, Math.round(numbers(x['rounds'], 'rounds')?.[0] ?? base.rounds)),
  };
  const seed = Number(x['seed'] ?? 1);
  const { rounds } = plan;
  const rows: LoadedRow[] = [];
  const capacities: Partial<Record<WorkloadName, Capacity>> = {};
  const descriptions: Partial<Record<WorkloadName, string>> = {};
  // Made once: B's documents are generated on first use and kept for every round.
  const workloads = new Map(plan.workloads.map((name) => [name, workload(name, seed)] as const));
  for (const [name, w] of workloads) {
    descriptions[name] = w.description;
    const capacity = plan.probe ? await probedCapacity(w, plan, seed) : derivedCapacity(w);
    capacities[name] = capacity;
    console.error(`${name}: least-load capacity ${capacity.perS.toFixed(1)} req/s (${capacity.how}: ${capacity.uncachedTokens.toFixed(0)} of ${capacity.promptTokens.toFixed(0)} prompt tokens to prefill per request)`);
  }
  for (let round = 1; round <= rounds; round++) {
    for (const [wi, name] of plan.workloads.entries()) {
      const w = workloads.get(name) as Workload;
      const capacity = capacities[name] as Capacity;
      for (const load of plan.loads) {
        const ratePerS = load * capacity.perS;
        for (const { router, replicas } of rowsOf(plan, name, load)) {
          const spec: RowSpec = {
            workload: w,
            router,
            replicas,
            conversationsPerS: ratePerS / w.meanTurns,
            shedding: load > 1,
            warmupMs: warmupMsFor(w, plan.warmupMs, ratePerS),
            durationMs: plan.durationMs,
            drainMs: plan.drainMs,
            // The same arrivals for every router at this workload, load and round.
            seed: seed * 1_000 + wi * 10 + plan.loads.indexOf(load) + (round - 1) * 100_000_000,
            id: `${name}${Math.round(load * 100)}-${router}-${replicas}-r${round}`,
          };
          const row: LoadedRow = { ...(await runRow(spec)), load, ratePerS, round };
          rows.push(row);
          console.error(progressLine(row));
        }
      }
    }
  }

  const bars = judge(rows);
  const facts = runFacts(`npm run bench -- prefix-affinity ${argv.join(' ')}`.trim());
  const markdown = [
    factsLine(facts),
    '',
    `Fleet: ${FLEET.engines} in-process engine simulators × ${FLEET.slots} slots, prefix cache ${FLEET.kvBlocks.toLocaleString('en')} blocks of ${FLEET.blockTokens} tokens (LRU), prefill ${FLEET.prefillTps.toLocaleString('en')} tokens/s, ${FLEET.ttftMs} ms fixed to first token, ${FLEET.outputTokens} output tokens ${FLEET.itlMs} ms apart; all requests streamed.`,
    '',
    'Workloads (seeded; the same conversations and arrival times for every router):',
    workloadLines(descriptions),
    '',
    `Capacity (least-load): ${Object.entries(capacities).map(([n, c]) => `${n} ${c.perS.toFixed(1)} req/s (${c.how}${c.how === 'probed' ? `, hit ratio ${c.hitRatio.toFixed(2)}` : ''}: ${c.uncachedTokens.toFixed(0)} of ${c.promptTokens.toFixed(0)} prompt tokens prefilled per request)`).join('; ')}. Probed: a least-load run (one router, this open loop, 80% of the no-hit capacity) gives the uncached prompt tokens per request u from the engines' counters; capacity = ${FLEET.engines} × min(${FLEET.slots} slots / (u ÷ ${FLEET.prefillTps} tokens/s + ${FLEET.ttftMs} ms + ${FLEET.outputTokens + 1} × ${FLEET.itlMs} ms), ${FLEET.prefillTps} / u), prefill being one FIFO lane per engine. Derived (smoke): the same with nothing cached.`,
    `Admission: loads ≤ 100% run with shedding off (switchyard \`--admission-max-waiting 1000000 --admission-kv-cache-threshold 1\`, the oracle unbounded; the peers have no equivalent); loads > 100% with switchyard shedding at 5 waiting and no router queue (\`--admission-max-waiting 5 --admission-queue-length 0\`, the default until the adaptive admission) and the oracle at 5. Warm-up ${plan.warmupMs / 1000} s (B: at least 2 requests per document, every document once first, so its caches are warm), measured ${plan.durationMs / 1000} s per row; one-turn workloads ramp their arrivals up over the first 5 s of the warm-up (half of it when shorter), A starts with the conversations a steady state has under way (prefix-runner.ts).`,
    '',
    bars.markdown(options),
    '',
    `Medians over ${rounds} round${rounds === 1 ? '' : 's'} (each round runs every row in turn, with its own arrivals):`,
    '',
    roundsTable(rows),
    '',
    'Every row:',
    '',
    table(rows),
    '',
    `Hit ratio: Σ Δ\`vllm:prefix_cache_hits_total\` / Σ Δ\`vllm:prefix_cache_queries_total\` over the engines in the measured window (tokens). TTFT: from when a request was due (its conversation's arrival, or the previous reply plus think time) to its first SSE event, over served requests due in the window. Running max/mean: every 100 ms, the largest engine's running count over the mean, averaged over the window. Busiest core: /proc/stat over the window; a row with a core above ${pct(BUSY_CORE_LIMIT)} is marked invalid (the machine, not the router, set its latency) and fails its bars. Router CPU: the router processes' CPU time in the window per request completed in it. A conversation ends at its first shed or failed turn.`,
    '',
    `Bars (prefix-affinity, and prefix-affinity-redis where run; medians over the rounds): A hit ratio ≥ ${BARS.minAffinityHitA} with least-load ≤ ${BARS.maxLeastLoadHitA}, TTFT p99 ≤ ${BARS.maxTtftP99ShareA}× least-load; B hit ratio ≥ ${BARS.minAffinityHitB}, TTFT p99 ≤ ${BARS.maxTtftP99ShareB}× least-load up to capacity and ≤ ${BARS.maxTtftP99ShareBOverload}× past it; C running max/mean ≤ ${BARS.maxRunningImbalanceC}; D and E TTFT p99 ≤ ${BARS.maxTtftP99ShareDE}× least-load; each at every load and replica count run. prefix-affinity-redis is compared with least-load-redis where that ran (else least-load), at the same replica count.`,
    '',
    'Routers:',
    ...routerLines(rows),
  ].join('\n');
  writeResults(options, 'prefix-affinity', facts, { plan, seed, rounds, fleet: FLEET, capacities, bars: bars.list, rows }, markdown);
  return bars.pass(options) ? 0 : 1;
}

/** One line per router: the command of its first row (several replicas run the same command behind nginx). */
function routerLines(rows: readonly LoadedRow[]): string[] {
  const first = new Map<string, string>();
  for (const r of rows) if (r.description !== '' && !first.has(r.router)) first.set(r.router, r.description);
  return [...first].map(([router, d]) => `- ${router}: \`${d}\``);
}

function progressLine(row: LoadedRow): string {
  const head = `round ${row.round}: ${row.workload} ${pct(row.load)} ${row.router} ×${row.replicas}`;
  if (row.unavailable !== undefined) return `${head}: unavailable: ${row.unavailable}`;
  const w = row.window;
  return `${head}: sent ${w.sent}, served ${w.served}, shed ${w.shed}, failed ${w.failed}, hit ${row.hitRatio.toFixed(2)}, TTFT p50 ${w.ttftP50.toFixed(0)} p99 ${w.ttftP99.toFixed(0)} ms, running max/mean ${row.running.maxOverMean.toFixed(2)}, cores ${row.coreBusy.map(pct).join('/')}`;
}

runIfMain(import.meta.url, prefixAffinity);

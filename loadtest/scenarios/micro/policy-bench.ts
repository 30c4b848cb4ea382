/**
 * Micro-benchmark of one scheduling decision (load-view clock tick, candidate
 * lookup, filters, scorers, picker) with 500 endpoints serving one model,
 * each with a fresh scrape and some requests in flight.
 *
 *   node loadtest/scenarios/micro/policy-bench.ts [--baseline DIR] [--rounds N]
 *
 * With `--baseline DIR` (a checkout of commit 958aeb7 or earlier, where the
 * policies and the admission director did this job) the same decisions run
 * through that code in the same process, interleaved round by round with
 * this checkout's, and the table gives the median over rounds of each and
 * their ratio. Each decision is timed on its own after a warm-up; every
 * result is checked (an admitted target) so the loop cannot be optimised
 * away. Exits 1 when any profile's p99 reaches 20 µs, or, with a baseline
 * (then the only bar, since a loaded machine slows both alike), when a
 * preset's median p99 is more than 20% above the baseline's.
 */
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LoadView } from '../../../router/load/load-view.ts';
import { ProfileRegistry } from '../../../router/scheduling/profiles/presets.ts';
import { Scheduler } from '../../../router/scheduling/scheduler.ts';
import type { RequestFacts } from '../../../router/scheduling/candidate.ts';

const ENDPOINTS = 500;
const ITERATIONS = 50_000;
const WARMUP = 10_000;
const BUDGET_US = 20;
/** Largest slowdown against the baseline accepted, as a ratio of median p99s. */
const MAX_RATIO = 1.2;

const { values: args } = parseArgs({ options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '5' } } });
const rounds = Number(args.rounds);

/** One decision for `facts`; true when it admitted somewhere. */
type Decide = (facts: RequestFacts) => boolean;
/** Builds a decision function over a fresh fleet, for a preset name. */
type Build = (policy: string) => Decide;

/** The fleet, built with a given LoadView class (this checkout's or the baseline's: same constructor contract). */
function fleet(View: typeof LoadView): LoadView {
  const view = new View({ maxScrapeAgeMs: 60_000, defaultCapacity: 256, ejection: { consecutiveFailures: 5, baseMs: 10_000, maxMs: 300_000, maxShare: 0.5 } });
  view.update({
    version: 1,
    endpoints: Array.from({ length: ENDPOINTS }, (_, i) => ({ id: `default/vllm-${i}`, url: `http://10.1.${i >> 8}.${i & 255}:8000`, models: ['llama'], labels: {}, ready: true, draining: false })),
  });
  let i = 0;
  for (const state of view.all()) {
    view.recordScrape(state, new Map([['llama', { waiting: i % 3, running: (i * 7) % 64, kvCacheUsage: ((i * 13) % 90) / 100 }]]));
    for (let k = 0; k < i % 5; k++) view.begin(state);
    i++;
  }
  return view;
}

const THRESHOLDS = { maxWaiting: 5, kvCacheThreshold: 0.9, maxInFlightPerEndpoint: 0 };

const current: Build = (policy) => {
  const profiles = new ProfileRegistry(
    { policy, modelPolicies: {}, profiles: {}, balanceEpsilon: 0.25, powerOfTwoChoices: false, prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 } },
    Math.random,
  );
  const scheduler = new Scheduler({ view: fleet(LoadView), profiles, thresholds: THRESHOLDS, countDecision: () => undefined });
  return (facts) => scheduler.schedule(facts).kind === 'admit';
};

/** The pre-pipeline code of a baseline checkout: its policy registry and admission director. */
async function baseline(dir: string): Promise<Build> {
  const load = async (path: string) => (await import(pathToFileURL(resolve(dir, path)).href)) as Record<string, new (...args: never[]) => unknown>;
  const { LoadView: View } = await load('router/load/load-view.ts');
  const { PolicyRegistry } = await load('router/policy/registry.ts');
  const { Director } = await load('router/admission/director.ts');
  return (policy) => {
    const registry = new (PolicyRegistry as unknown as new (s: object, r: () => number) => { forModel(m: string): unknown })({ policy, modelPolicies: {}, balanceEpsilon: 0.25, powerOfTwoChoices: false }, Math.random);
    const director = new (Director as unknown as new (d: object) => { decide(f: RequestFacts): { kind: string } })({
      view: fleet(View as unknown as typeof LoadView),
      policyFor: (model: string) => registry.forModel(model),
      thresholds: THRESHOLDS,
      countDecision: () => undefined,
    });
    return (facts) => director.decide(facts).kind === 'admit';
  };
}

function measure(decide: Decide, withSession: boolean): { p50: number; p99: number } {
  const facts = Array.from({ length: 1024 }, (_, i): RequestFacts => ({ model: 'llama', stream: true, sessionKey: withSession ? `session-${i}` : undefined, bodyBytes: 2048 }));
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    const admitted = decide(facts[i & 1023] as RequestFacts);
    const elapsed = Number(process.hrtime.bigint() - start) / 1000;
    assert.ok(admitted);
    if (i >= WARMUP) samples[i - WARMUP] = elapsed;
  }
  samples.sort();
  return { p50: samples[Math.floor(ITERATIONS * 0.5)] as number, p99: samples[Math.floor(ITERATIONS * 0.99)] as number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const cases: [string, string, boolean][] = [
  ['least-load', 'least-load', false],
  ['session (with key)', 'session', true],
  ['auto (no key → least-load)', 'auto', false],
  ['round-robin', 'round-robin', false],
];
const builds: [string, Build][] = [['this checkout', current]];
if (args.baseline !== undefined) builds.push(['baseline', await baseline(args.baseline)]);
const results = new Map<string, { p50: number[]; p99: number[] }>();
// One untimed pass over every case first, so the JIT has seen all the code paths before any is timed.
for (const [, build] of builds) for (const [, policy, session] of cases) measure(build(policy), session);
for (let round = 0; round < rounds; round++) {
  for (const [label, build] of builds) {
    for (const [name, policy, session] of cases) {
      const r = measure(build(policy), session);
      const key = `${name}\u0000${label}`;
      const entry = results.get(key) ?? { p50: [], p99: [] };
      entry.p50.push(r.p50);
      entry.p99.push(r.p99);
      results.set(key, entry);
    }
  }
}
console.log(`| profile (${ENDPOINTS} endpoints), median of ${rounds} | code | p50 µs | p99 µs | p99 spread µs | p99 ratio to baseline |`);
console.log('|---|---|---|---|---|---|');
let failed = false;
for (const [name] of cases) {
  const base = results.get(`${name}\u0000baseline`);
  for (const [label] of builds) {
    const r = results.get(`${name}\u0000${label}`) as { p50: number[]; p99: number[] };
    const p99 = median(r.p99);
    const ratio = base === undefined || label === 'baseline' ? undefined : p99 / median(base.p99);
    console.log(`| ${name} | ${label} | ${median(r.p50).toFixed(2)} | ${p99.toFixed(2)} | ${Math.min(...r.p99).toFixed(2)}-${Math.max(...r.p99).toFixed(2)} | ${ratio === undefined ? '' : ratio.toFixed(2)} |`);
    // With a baseline the ratio is the bar (a loaded machine moves both); alone, the absolute budget.
    if (label === 'this checkout' && (ratio === undefined ? p99 >= BUDGET_US : ratio > MAX_RATIO)) failed = true;
  }
}
const bar = args.baseline === undefined ? `under ${BUDGET_US} µs` : `within ${MAX_RATIO}x the baseline's`;
console.log(failed ? `FAIL: a profile's p99 is not ${bar}` : `PASS: every profile's p99 is ${bar}`);
process.exitCode = failed ? 1 : 0;

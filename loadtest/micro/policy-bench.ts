/**
 * Micro-benchmark of one routing decision (load-view clock tick, candidate
 * lookup, policy ordering, admission) with 500 endpoints serving one model,
 * each with a fresh scrape and some requests in flight.
 *
 *   node loadtest/micro/policy-bench.ts
 *
 * Each decision is timed on its own after a warm-up; every result is checked
 * (a non-empty ordered list) so the loop cannot be optimised away. Exits 1
 * when any policy's p99 reaches 20 µs.
 */
import assert from 'node:assert/strict';
import { Director } from '../../router/admission/director.ts';
import { LoadView } from '../../router/load/load-view.ts';
import { PolicyRegistry, type PolicyName } from '../../router/policy/registry.ts';
import type { RequestFacts } from '../../router/policy/policy.ts';

const ENDPOINTS = 500;
const ITERATIONS = 50_000;
const WARMUP = 10_000;
const BUDGET_US = 20;

function fleet(): LoadView {
  const view = new LoadView({ maxScrapeAgeMs: 60_000, defaultCapacity: 256, ejection: { consecutiveFailures: 5, baseMs: 10_000, maxMs: 300_000, maxShare: 0.5 } });
  view.update({
    version: 1,
    endpoints: Array.from({ length: ENDPOINTS }, (_, i) => ({
      id: `default/vllm-${i}`,
      url: `http://10.1.${i >> 8}.${i & 255}:8000`,
      models: ['llama'],
      labels: {},
      ready: true,
      draining: false,
    })),
  });
  let i = 0;
  for (const state of view.all()) {
    view.recordScrape(state, new Map([['llama', { waiting: i % 3, running: (i * 7) % 64, kvCacheUsage: ((i * 13) % 90) / 100 }]]));
    for (let k = 0; k < i % 5; k++) view.begin(state);
    i++;
  }
  return view;
}

function measure(policy: PolicyName, withSession: boolean): { p50: number; p99: number; mean: number } {
  const view = fleet();
  const registry = new PolicyRegistry({ policy, modelPolicies: {}, balanceEpsilon: 0.25, powerOfTwoChoices: false }, Math.random);
  const director = new Director({
    view,
    policyFor: (model) => registry.forModel(model),
    thresholds: { maxWaiting: 5, kvCacheThreshold: 0.9, maxInFlightPerEndpoint: 0 },
    countDecision: () => undefined,
  });
  const facts = Array.from({ length: 1024 }, (_, i): RequestFacts => ({ model: 'llama', stream: true, sessionKey: withSession ? `session-${i}` : undefined, bodyBytes: 2048 }));
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    const decision = director.decide(facts[i & 1023] as RequestFacts);
    const elapsed = Number(process.hrtime.bigint() - start) / 1000;
    assert.ok(decision.kind === 'admit' && decision.attempts.length > 0);
    if (i >= WARMUP) samples[i - WARMUP] = elapsed;
  }
  samples.sort();
  let sum = 0;
  for (const s of samples) sum += s;
  return { p50: samples[Math.floor(ITERATIONS * 0.5)] as number, p99: samples[Math.floor(ITERATIONS * 0.99)] as number, mean: sum / ITERATIONS };
}

const cases: [string, PolicyName, boolean][] = [
  ['least-load', 'least-load', false],
  ['session (with key)', 'session', true],
  ['auto (no key → least-load)', 'auto', false],
  ['round-robin', 'round-robin', false],
];
console.log(`| policy (${ENDPOINTS} endpoints) | p50 µs | p99 µs | mean µs |`);
console.log('|---|---|---|---|');
let failed = false;
// One untimed pass over every case first, so the JIT has seen all the code paths before any is timed.
for (const [, policy, session] of cases) measure(policy, session);
for (const [name, policy, session] of cases) {
  const r = measure(policy, session);
  console.log(`| ${name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.mean.toFixed(2)} |`);
  if (r.p99 >= BUDGET_US) failed = true;
}
console.log(failed ? `FAIL: a policy's p99 reached ${BUDGET_US} µs` : `PASS: every policy's p99 is under ${BUDGET_US} µs`);
process.exitCode = failed ? 1 : 0;

/**
 * Micro-benchmark of what prefix affinity adds to one request: the canonical
 * prompt prefix in the body scan, then classify and the request hooks'
 * prepare (prefix keys, group table read) + schedule + their admitted (the
 * group table record), against the same request
 * scheduled by `auto` (keyless: least-load) in the same run. Chat bodies of
 * 1 KB, 32 KB and 200 KB (multi-turn conversations, 256 distinct ones per
 * size), 8 and 500 endpoints.
 *
 *   node loadtest/scenarios/micro/prefix-decision-bench.ts
 *
 * Prints a Markdown table of p50/p99 µs (each call timed on its own, after a
 * warm-up); every decision is checked, so no loop can be optimised away.
 */
import assert from 'node:assert/strict';
import { LoadView } from '../../../router/load/load-view.ts';
import { Classifier } from '../../../router/request/classify.ts';
import { JsonBodyScanner } from '../../../router/request/json-body-scanner.ts';
import { PrefixFactsHook } from '../../../router/request/prefix-facts-hook.ts';
import { PrefixGroups } from '../../../router/request/prefix-groups.ts';
import { RequestHooks } from '../../../router/request/request-hooks.ts';
import { ResponsePinHook } from '../../../router/request/response-pin-hook.ts';
import { ResponsePins } from '../../../router/request/response-pins.ts';
import type { BodyFacts } from '../../../router/request/routing-facts.ts';
import { ProfileRegistry } from '../../../router/scheduling/profiles/presets.ts';
import { Scheduler } from '../../../router/scheduling/scheduler.ts';
import { SessionNames } from '../../../router/state/session-names.ts';

const ITERATIONS = 20_000;
const WARMUP = 4_000;
const CONVERSATIONS = 256;
const PREFIX_BYTES = 64 * 1024;

function fleet(endpoints: number): LoadView {
  const view = new LoadView({ maxScrapeAgeMs: 60_000, defaultCapacity: 256, ejection: { consecutiveFailures: 5, baseMs: 10_000, maxMs: 300_000, maxShare: 0.5 } });
  view.update({
    version: 1,
    endpoints: Array.from({ length: endpoints }, (_, i) => ({ id: `default/vllm-${i}`, url: `http://10.1.${i >> 8}.${i & 255}:8000`, models: ['llama'], labels: {}, ready: true, draining: false })),
  });
  let i = 0;
  for (const state of view.all()) {
    view.recordScrape(state, new Map([['llama', { waiting: 0, running: (i * 7) % 64, kvCacheUsage: ((i * 13) % 80) / 100 }]]));
    i++;
  }
  return view;
}

/** A chat body of about `bytes`: a system prompt, then turns of the conversation `c`, the last a question. */
function chatBody(bytes: number, c: number): Buffer {
  const messages: { role: string; content: string }[] = [{ role: 'system', content: 'You are a careful assistant. '.repeat(20) }];
  let turn = 0;
  while (JSON.stringify(messages).length < bytes - 200) {
    messages.push({ role: 'user', content: `Conversation ${c}, question ${turn}: ${'tell me more about this. '.repeat(8)}` });
    messages.push({ role: 'assistant', content: `Answer ${turn}. ${'Here is a longer explanation of the matter. '.repeat(30)}` });
    turn++;
  }
  messages.push({ role: 'user', content: `Conversation ${c}, last question?` });
  return Buffer.from(JSON.stringify({ model: 'llama', messages, stream: true }));
}

function scan(body: Buffer, promptPrefixBytes: number): BodyFacts {
  const scanner = new JsonBodyScanner({ maxDepth: 64, promptPrefixBytes });
  scanner.push(body);
  return scanner.finish(body);
}

function time(run: (i: number) => void): { p50: number; p99: number } {
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    run(i);
    const elapsed = Number(process.hrtime.bigint() - start) / 1000;
    if (i >= WARMUP) samples[i - WARMUP] = elapsed;
  }
  samples.sort();
  return { p50: samples[Math.floor(ITERATIONS * 0.5)] as number, p99: samples[Math.floor(ITERATIONS * 0.99)] as number };
}

const fmt = (r: { p50: number; p99: number }) => `${r.p50.toFixed(1)} / ${r.p99.toFixed(1)}`;
console.log('| prompt | endpoints | body scan, prefix off | body scan, prefix on | classify + schedule, prefix-affinity | classify + schedule, auto (keyless) |');
console.log('|---|---|---|---|---|---|');
for (const size of [1_024, 32 * 1_024, 200 * 1_024]) {
  const bodies = Array.from({ length: CONVERSATIONS }, (_, c) => chatBody(size, c));
  const scanOff = time((i) => assert.ok(scan(bodies[i % CONVERSATIONS] as Buffer, 0).stream));
  const scanOn = time((i) => assert.ok(scan(bodies[i % CONVERSATIONS] as Buffer, PREFIX_BYTES).promptPrefix));
  const factsOn = bodies.map((body) => scan(body, PREFIX_BYTES));
  const factsOff = bodies.map((body) => scan(body, 0));
  for (const endpoints of [8, 500]) {
    const decide = (policy: string, facts: readonly BodyFacts[]) => {
      const view = fleet(endpoints);
      const profiles = new ProfileRegistry(
        { policy, modelPolicies: {}, profiles: {}, balanceEpsilon: 0.25, powerOfTwoChoices: false, prefix: { epsilon: 0.5, kappa: 2, spread: 2, minReuse: 0.1 } },
        Math.random,
      );
      const scheduler = new Scheduler({ view, profiles, thresholds: { maxWaiting: 5, kvCacheThreshold: 0.9, maxInFlightPerEndpoint: 0 }, countDecision: () => undefined });
      const classifier = new Classifier({
        models: view,
        sessionHeader: 'x-session-id',
        sessionFromUser: true,
        sessionNames: SessionNames.derivedFrom('switchyard:'),
        defaultModel: undefined,
      });
      const hooks = new RequestHooks([
        new ResponsePinHook(new ResponsePins()),
        new PrefixFactsHook({ usesPrefix: (model) => profiles.usesPrefix(model), groups: new PrefixGroups(), now: Date.now }),
      ]);
      return time((i) => {
        const body = facts[i % CONVERSATIONS] as BodyFacts;
        const requestFacts = classifier.classify({}, body, size, undefined);
        assert.equal(hooks.prepare(requestFacts, body, undefined), undefined);
        const schedule = scheduler.schedule(requestFacts);
        assert.equal(schedule.kind, 'admit');
        hooks.admitted(requestFacts, schedule.attempts[0] as { id: string; idHash: number });
      });
    };
    const prefix = decide('prefix-affinity', factsOn);
    const auto = decide('auto', factsOff);
    console.log(`| ${size / 1024} KB | ${endpoints} | ${fmt(scanOff)} | ${fmt(scanOn)} | ${fmt(prefix)} | ${fmt(auto)} |`);
  }
}
console.log('(p50 / p99 µs per request; one call timed at a time)');

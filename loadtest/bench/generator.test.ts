import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { EngineSimulator } from '../sim/server.ts';
import { runLoad } from './generator.ts';
import { mergeResults, runGenerators, splitSpec } from './generators.ts';
import { Histogram } from './histogram.ts';
import type { LoadSpec } from './load-spec.ts';

const TOOL_REQUESTS = { path: '/v1/chat/completions', model: 'gen-model', stream: 'mixed', tools: true, promptBytes: 0, headers: {}, users: 10, checkIds: true } as const;

async function withSim<T>(run: (url: string, sim: EngineSimulator) => Promise<T>): Promise<T> {
  // Splitting writes at arbitrary bytes makes the checker reassemble events across chunks.
  const sim = new EngineSimulator({ model: 'gen-model', knobs: { maxSeqs: 1000, ttftMs: 2, itlMs: 1, outputTokens: 8, split: true } });
  await sim.listen();
  try {
    return await run(sim.url, sim);
  } finally {
    await sim.close();
  }
}

test('closed loop by count: every streamed and non-streamed tool call validates, timings are recorded', async () => {
  await withSim(async (url, sim) => {
    const result = await runLoad({ target: url, request: TOOL_REQUESTS, mode: { kind: 'closed', concurrency: 8 }, warmupMs: 0, requests: 200, idPrefix: 't', seed: 1 });
    assert.equal(result.measured, 200);
    assert.equal(result.ok, 200, JSON.stringify(result.failureExamples));
    assert.equal(result.failed, 0);
    assert.equal(sim.requests, 200);
    assert.equal(Histogram.of([result.e2e]).count, 200);
    // Streams report token gaps; the engine sends ≥ 8 tool-argument fragments each.
    assert.ok(Histogram.of([result.itl]).count >= 100 * 7);
    const ttft = Histogram.of([result.ttft]).percentiles();
    assert.ok(ttft.p50 >= 2 && ttft.p50 <= Histogram.of([result.e2e]).percentiles().p50);
  });
});

test('open loop holds the asked rate and excludes the warm-up', async () => {
  await withSim(async (url, sim) => {
    const result = await runLoad({ target: url, request: { ...TOOL_REQUESTS, stream: false }, mode: { kind: 'open', ratePerS: 400, maxConnections: 64 }, warmupMs: 250, durationMs: 1000, idPrefix: 'o', seed: 2 });
    assert.equal(result.failed, 0);
    // Poisson at 400/s for 1 s: 400 ± 3σ (σ = 20).
    assert.ok(result.measured > 340 && result.measured < 460, `measured ${result.measured}`);
    assert.ok(sim.requests > result.measured + 50, 'warm-up requests were sent but not measured');
    assert.equal(result.ok, result.measured);
  });
});

test('closed loop with a session per client: each client sends one key of its own on all its requests, unique across generator processes', async () => {
  await withSim(async (url, sim) => {
    const request = { ...TOOL_REQUESTS, users: 0 };
    const one = await runLoad({ target: url, request, mode: { kind: 'closed', concurrency: 1, sessionPerClient: true }, warmupMs: 0, requests: 12, idPrefix: 'solo', seed: 5 });
    assert.equal(one.ok, 12, JSON.stringify(one.failureExamples));
    assert.deepEqual([...sim.sessions], [['solo-client-0', 12]], 'one client: one key on every request');
    const run = await runGenerators({ target: url, request, mode: { kind: 'closed', concurrency: 6, sessionPerClient: true }, warmupMs: 0, requests: 60, idPrefix: 's', seed: 6 }, { processes: 2, label: 'test', quiet: true });
    assert.equal(run.ok, 60, JSON.stringify(run.failureExamples));
    const keys = [...sim.sessions.keys()].filter((key) => key.startsWith('s-')).sort();
    assert.deepEqual(keys, ['s-g0-client-0', 's-g0-client-1', 's-g0-client-2', 's-g1-client-0', 's-g1-client-1', 's-g1-client-2']);
    assert.equal(keys.reduce((n, key) => n + (sim.sessions.get(key) ?? 0), 0), 60);
  });
});

test('corruption a real engine cannot be made to produce is counted and kept for inspection (in-process fake peer)', async () => {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      const id = n % 3 === 0 ? 'chatcmpl-somebody-else' : `chatcmpl-${String(req.headers['x-request-id'])}`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const call = (args: string) => `data: ${JSON.stringify({ id, choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: args } }] } }] })}\n\n`;
      // Every other response loses the end of its arguments.
      res.end(`${call('{"a": ')}${n % 2 === 0 ? '' : call('1}')}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const result = await runLoad({ target: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, request: { ...TOOL_REQUESTS, stream: true }, mode: { kind: 'closed', concurrency: 2 }, warmupMs: 0, requests: 60, idPrefix: 'c', seed: 3 });
    // Odd n with n % 3 !== 0 are intact: 1, 5, 7, 11, ... (20 of 60).
    assert.equal(result.ok, 20);
    assert.equal(result.failed, 40);
    assert.equal(result.failureKinds['corrupt'], 40);
    assert.ok(result.failureExamples.length > 0 && result.failureExamples.length <= 5);
    assert.ok(result.failureExamples.every((e) => /interleaved|do not parse/.test(e.problem) && e.bodyHead.startsWith('data: ')));
  } finally {
    server.close();
  }
});

test('several generator processes split the work and their results add up', async () => {
  await withSim(async (url, sim) => {
    const spec: LoadSpec = { target: url, request: TOOL_REQUESTS, mode: { kind: 'closed', concurrency: 5 }, warmupMs: 0, requests: 301, idPrefix: 'm', seed: 4 };
    assert.deepEqual([0, 1].map((i) => splitSpec(spec, 2, i).requests), [151, 150]);
    const run = await runGenerators(spec, { processes: 2, label: 'test', quiet: true });
    assert.equal(run.measured, 301);
    assert.equal(run.ok, 301, JSON.stringify(run.failureExamples));
    assert.equal(sim.requests, 301);
    assert.equal(run.processes.length, 2);
    assert.ok(run.processes.every((p) => p.cpuShare > 0));
  });
});

test('merged results add up and name a generator that ran out of CPU or fell behind', () => {
  const lag = new Histogram();
  for (let i = 0; i < 100; i++) lag.record(i < 95 ? 0.1 : 40);
  const e2e = new Histogram();
  e2e.record(5);
  const none = new Histogram().snapshot();
  const tokens = { output: e2e.snapshot(), fromUsage: 1, prompt: none, askedOutput: 5, askedPrompt: 0 };
  const base = { measured: 10, ok: 9, shed: 0, failed: 1, failureKinds: { reset: 1 }, failureExamples: [], e2e: e2e.snapshot(), ttft: e2e.snapshot(), itl: none, sendLag: none, timeline: [4, 5], seconds: [{ failed: 1, outputTokens: 5, ttft: e2e.snapshot(), itl: none }], tokens, windowMs: 1000, cpuShare: 0.3, loopDelayP99Ms: 11 };
  const calm = mergeResults([base, { ...base, timeline: [1, 2, 3] }]);
  assert.equal(calm.generatorBottleneck, undefined);
  assert.deepEqual(calm.timeline, [5, 7, 3]);
  assert.equal(calm.ok, 18);
  assert.deepEqual(calm.failureKinds, { reset: 2 });
  assert.equal(Histogram.of([calm.e2e]).count, 2);
  assert.deepEqual([calm.tokens.fromUsage, calm.tokens.askedOutput, Histogram.of([calm.tokens.output]).count], [2, 10, 2]);
  assert.deepEqual(calm.seconds.map((s) => [s.failed, s.outputTokens]), [[2, 10]]);
  const busy = mergeResults([base, { ...base, cpuShare: 0.97, sendLag: lag.snapshot() }]);
  assert.match(busy.generatorBottleneck ?? '', /generator 1 used 97% of a core/);
  assert.match(busy.generatorBottleneck ?? '', /generator 1 sent late \(p99 40 ms/);
  assert.doesNotMatch(busy.generatorBottleneck ?? '', /generator 0/);
});

test('token-shaped requests: answers as long as asked (the simulator honours ignore_eos), counted from usage, conversations on their own session keys', async () => {
  await withSim(async (url, sim) => {
    const shape = { promptTokens: { min: 20, max: 40 }, outputTokens: { min: 5, max: 30 }, ignoreEos: true, turns: 3 };
    const request = { path: '/v1/chat/completions', model: 'gen-model', stream: true, tools: false, promptBytes: 0, headers: {}, users: 4, checkIds: true, shape } as const;
    const run = await runGenerators({ target: url, request, mode: { kind: 'closed', concurrency: 4 }, warmupMs: 0, requests: 60, idPrefix: 'shaped', seed: 7 }, { processes: 2, label: 'test', quiet: true });
    assert.equal(run.ok, 60, JSON.stringify(run.failureExamples));
    assert.equal(run.tokens.fromUsage, 60, 'every stream carried its usage chunk');
    const output = Histogram.of([run.tokens.output]);
    assert.equal(run.tokens.output.sum, run.tokens.askedOutput, 'each answer as long as its max_tokens');
    assert.ok(output.percentiles().max <= 30 && output.quantile(0) >= 5);
    // Later turns resend earlier ones: the prompts the engine counted outgrow the new text asked per turn.
    assert.ok(run.tokens.prompt.sum > 60 * 40, `prompt tokens ${run.tokens.prompt.sum}`);
    assert.equal(run.seconds.reduce((n, s) => n + s.outputTokens, 0), run.tokens.output.sum);
    const keys = [...sim.sessions.keys()].filter((key) => key.startsWith('shaped-')).sort();
    assert.deepEqual(keys, ['shaped-g0-session-0', 'shaped-g0-session-1', 'shaped-g1-session-0', 'shaped-g1-session-1']);
  });
});

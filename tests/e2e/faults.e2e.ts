import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { errorOf, postJson, sseData, startFleet, waitFor, type Fleet } from '../kit/harness.ts';

const MODEL = 'm-faults';
const body = (extra: Record<string, unknown> = {}) => ({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra });

async function metricValue(fleet: Fleet, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${fleet.admin}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) if (pattern.test(line)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
}

describe('upstream faults', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet(
      [{ model: MODEL, knobs: { ttftMs: 1, itlMs: 1, maxSeqs: 100 } }],
      ['--timeouts-stream-first-byte-ms', '300', '--timeouts-response-ms', '400'],
    );
  });
  after(() => fleet.close());

  it('propagates a client abort upstream within 1 s and releases the in-flight count', async () => {
    const requestId = 'abort-1';
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${fleet.base}/v1/chat/completions`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-request-id': requestId, 'x-sim-itl-ms': '50', 'x-sim-output-tokens': '400' } },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => undefined);
      req.once('error', reject);
      req.end(JSON.stringify(body({ stream: true })));
    });
    const abortedAt = Date.now();
    await waitFor(() => fleet.engines[0]?.sent(requestId) !== undefined, 1_000);
    assert.ok(Date.now() - abortedAt < 1_000);
    assert.equal(fleet.engines[0]?.sent(requestId)?.complete, false, 'the engine stopped generating');
    await waitFor(() => fleet.router.inFlight === 0 && [...fleet.router.view.all()].every((s) => s.inFlight === 0), 1_000);
  });

  it('ends an SSE stream with an error event and no [DONE] when the engine dies mid-stream', async () => {
    const before = await metricValue(fleet, /^switchyard_upstream_errors_total\{.*kind="midstream"/);
    const response = await postJson(`${fleet.base}/v1/chat/completions`, body({ stream: true }), { 'x-sim-die-after-chunks': '3' });
    assert.equal(response.status, 200);
    const events = sseData(response.body);
    assert.notEqual(events.at(-1), '[DONE]');
    const last = JSON.parse(events.at(-1) ?? '') as { error: { code: string } };
    assert.equal(last.error.code, 'SWITCHYARD_UPSTREAM_FAILED');
    assert.ok(!response.body.includes('[DONE]'));
    assert.equal(await metricValue(fleet, /^switchyard_upstream_errors_total\{.*kind="midstream"/), before + 1);
  });

  it('closes a partial SSE event before the error event, wherever the engine died', async () => {
    // Split writes cut the stream anywhere: inside an event, after one newline of its separator,
    // or (unsplit) on an event boundary. The error event must start a fresh event each time,
    // after exactly one blank line: no merged partial event, no extra blank lines.
    // Each split cut is random (the engine's seeded generator): many deaths make every case likely.
    for (const split of [false, true]) {
      for (let chunks = 2; chunks <= (split ? 30 : 5); chunks++) {
        const response = await postJson(`${fleet.base}/v1/chat/completions`, body({ stream: true }), { 'x-sim-output-tokens': '64', 'x-sim-die-after-chunks': String(chunks), ...(split ? { 'x-sim-split': 'true' } : {}) });
        const text = response.body.toString('utf8');
        const errorAt = text.lastIndexOf('data: {"error"');
        const label = `split ${split}, died after ${chunks} writes: ${JSON.stringify(text.slice(Math.max(0, errorAt - 12), errorAt + 8))}`;
        assert.ok(errorAt > 0, label);
        assert.ok(text.endsWith('}\n\n'), label);
        const before = text.slice(0, errorAt);
        assert.ok(before.endsWith('\n\n') && !before.endsWith('\n\n\n'), label);
      }
    }
  });

  it('cuts the connection when a non-streaming body dies midway', async () => {
    const control = await postJson(`${fleet.base}/v1/chat/completions`, body(), { 'x-sim-split': 'true' });
    assert.equal(control.status, 200);
    assert.ok(control.complete, 'a split body alone arrives whole');
    JSON.parse(control.body.toString('utf8'));
    const response = await postJson(`${fleet.base}/v1/chat/completions`, body(), { 'x-sim-die-after-chunks': '1', 'x-sim-split': 'true' });
    assert.equal(response.status, 200);
    assert.equal(response.complete, false, 'the client sees the body cut short');
    assert.throws(() => JSON.parse(response.body.toString('utf8')));
  });

  it('answers 504 when a stream sends no first byte within its budget', async () => {
    const startedAt = performance.now();
    const response = await postJson(`${fleet.base}/v1/chat/completions`, body({ stream: true }), { 'x-sim-ttft-ms': '2000' });
    const elapsed = performance.now() - startedAt;
    assert.equal(response.status, 504);
    assert.equal(errorOf(response).code, 'SWITCHYARD_UPSTREAM_TIMEOUT');
    // On its 300 ms budget, not when undici's coarse header timer gets to it (about a second).
    assert.ok(elapsed >= 295 && elapsed < 550, `answered after ${elapsed.toFixed(0)} ms`);
  });

  it('answers 504 when a black-holed engine never answers a non-streaming request', async () => {
    const response = await postJson(`${fleet.base}/v1/chat/completions`, body(), { 'x-sim-stall': 'true' });
    assert.equal(response.status, 504);
  });

  it('times every attempt deadline from its own start, with deadlines answered and started around it', async () => {
    // The forwarder keeps one timer per budget (deadline-queue.ts). A queue that timed a later
    // request from an earlier one's start, or waited a whole budget again after each expiry,
    // would answer B 200 ms early or about 400 ms late.
    const budgetMs = 400;
    const stalled = async (delayMs: number): Promise<number> => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const startedAt = performance.now();
      const response = await postJson(`${fleet.base}/v1/chat/completions`, body(), { 'x-sim-stall': 'true' });
      assert.equal(response.status, 504);
      assert.equal(errorOf(response).code, 'SWITCHYARD_UPSTREAM_TIMEOUT');
      return performance.now() - startedAt;
    };
    const answered = async (delayMs: number): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, body())).status, 200);
    };
    const [a, b, c] = await Promise.all([stalled(0), stalled(200), stalled(500), answered(50), answered(250)]);
    for (const [name, elapsed] of [['A', a], ['B', b], ['C', c]] as const) {
      assert.ok(elapsed >= budgetMs - 5, `${name} answered after ${elapsed.toFixed(0)} ms, before its ${budgetMs} ms budget`);
      assert.ok(elapsed < budgetMs + 250, `${name} answered after ${elapsed.toFixed(0)} ms, ${budgetMs} ms budget`);
    }
  });

  it('passes an engine 500 through unchanged and counts it', async () => {
    const relayed = /^switchyard_upstream_errors_total\{.*kind="status_5xx"/;
    const before = await metricValue(fleet, relayed);
    const response = await postJson(`${fleet.base}/v1/chat/completions`, body(), { 'x-sim-fail-rate': '1' });
    assert.equal(response.status, 500);
    assert.equal((JSON.parse(response.body.toString('utf8')) as { type: string }).type, 'InternalServerError');
    // A 5xx answer is the engine's, passed through; it counts on the endpoint's health.
    const state = [...fleet.router.view.all()][0];
    assert.equal(state?.lastFailureKind, 'status_5xx');
    // And in the metric the router-caused 5xx alert subtracts from all 5xx answers.
    assert.equal(await metricValue(fleet, relayed), before + 1);
  });

  it('times the first token of streamed 2xx answers only, and exports what the alert rules read', async () => {
    const ttft = /^switchyard_time_to_first_token_seconds_count\{.*model="m-faults"/;
    const before = await metricValue(fleet, ttft);
    assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, body({ stream: true }))).status, 200);
    assert.equal(await metricValue(fleet, ttft), before + 1);
    assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, body())).status, 200);
    assert.equal((await postJson(`${fleet.base}/v1/chat/completions`, body({ stream: true }), { 'x-sim-fail-rate': '1' })).status, 500);
    assert.equal(await metricValue(fleet, ttft), before + 1, 'neither a non-streamed answer nor an engine error is a first token');
    assert.equal(await metricValue(fleet, /^switchyard_model_ready_endpoints\{model="m-faults"\}/), 1);
    assert.equal(await metricValue(fleet, /^switchyard_backend_routable\{/), 1);
    const age = await metricValue(fleet, /^switchyard_backend_scrape_age_seconds\{/);
    assert.ok(age >= 0 && age < 10, `scrape age ${age} s`);
  });
});

describe('retry on another endpoint', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([
      { model: MODEL, knobs: { ttftMs: 1, itlMs: 1 } },
      { model: MODEL, knobs: { ttftMs: 1, itlMs: 1 } },
    ]);
  });
  after(() => fleet.close());

  it('retries once on the other endpoint when one refuses connections, then answers 502 when both do', async () => {
    const [dead, alive] = fleet.engines as [NonNullable<Fleet['engines'][0]>, NonNullable<Fleet['engines'][0]>];
    await dead.close();
    for (let i = 0; i < 20; i++) {
      const response = await postJson(`${fleet.base}/v1/chat/completions`, body());
      assert.equal(response.status, 200, `request ${i}`);
    }
    const metrics = await (await fetch(`${fleet.admin}/metrics`)).text();
    assert.match(metrics, /switchyard_retries_total\{reason="connect"\} [1-9]/);
    await alive.close();
    const response = await postJson(`${fleet.base}/v1/chat/completions`, body());
    assert.equal(response.status, 502);
    assert.equal(errorOf(response).code, 'SWITCHYARD_UPSTREAM_UNREACHABLE');
  });
});

describe('reset before any response byte', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet([
      { model: MODEL, knobs: { ttftMs: 1, itlMs: 1 } },
      { model: MODEL, knobs: { ttftMs: 1, itlMs: 1 } },
    ]);
  });
  after(() => fleet.close());

  it('retries on the other endpoint when one resets every connection', async () => {
    (fleet.engines[0] as NonNullable<Fleet['engines'][0]>).knobs.refuse = true;
    for (let i = 0; i < 20; i++) {
      const response = await postJson(`${fleet.base}/v1/chat/completions`, body({ stream: true }));
      assert.equal(response.status, 200, `request ${i}`);
      assert.equal(sseData(response.body).at(-1), '[DONE]');
    }
  });
});
